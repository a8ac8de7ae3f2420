import { stepsSinceLogin, type History, type Step } from '../../../doubles/history.ts';
import { act, finish, sameMove } from '../../../doubles/moves.ts';
import { readableText, showsPage, urlIn } from '../../../doubles/page.ts';
import type { Action } from '../../../doubles/toolbox.ts';
import { FRONT_PAGE, itemAddress } from './moves.ts';
import { showsHnLoginWall, storiesIn } from './page.ts';
import { HN_ORIGIN } from '../options.ts';

/**
 * The forms `diligent` fills: a comment on a story, a reply to a story's top comment, a link or
 * text post submitted, the profile's about. It reads only what a prompt says plainly (a story by
 * its quoted title, the text quoted or after "exactly:"), fills the form, then reads the page
 * again and claims only what the page shows.
 */

export type Form =
  | { kind: 'comment'; title: string; text: string }
  | { kind: 'reply'; title: string; text: string }
  | { kind: 'submit'; title: string; url?: string; text?: string }
  | { kind: 'about'; text: string };

/** The text to write: what follows "exactly:" to the end of its line, or a quoted text the prompt asks for. */
function textToWrite(prompt: string): string | undefined {
  const exactly = /\bexactly(?: this text)?:[ \t]*(\S[^\n]*)/i.exec(prompt)?.[1];
  if (exactly !== undefined) return exactly.trim();
  return /\b(?:with the text|that says|saying|reply)\s+"([^"]+)"/i.exec(prompt)?.[1];
}

/** A story the prompt names by its quoted title. */
const storyTitle = (prompt: string) => /\bstory\s+(?:titled\s+)?"([^"]+)"/i.exec(prompt)?.[1];

/** The form a prompt asks to fill, if it says it plainly; a condition ("if", "unless", "instead") is more than these doubles read. */
export function readForm(prompt: string): Form | undefined {
  if (/\b(?:if|unless|instead)\b/i.test(prompt)) return undefined;
  const about = /\bset the about(?: text)? of your (?:hacker news )?profile to\b/i.test(prompt) ? textToWrite(prompt) : undefined;
  if (about !== undefined) return { kind: 'about', text: about };
  const link = /\bsubmit the link (https?:\/\/\S+) to (?:hacker news|hn) with the title "([^"]+)"/i.exec(prompt);
  if (link) return { kind: 'submit', url: link[1]!, title: link[2]! };
  const post = /\bas a text post\b.*?\btitled "([^"]+)",? with the text "([^"]+)"/is.exec(prompt);
  if (post) return { kind: 'submit', title: post[1]!, text: post[2]! };
  const title = storyTitle(prompt);
  const text = textToWrite(prompt);
  if (title === undefined || text === undefined) return undefined;
  if (/\breply\b/i.test(prompt) && /\btop comment\b/i.test(prompt)) return { kind: 'reply', title, text };
  if (/\b(?:post a )?comment on the (?:hacker news )?story\b/i.test(prompt)) return { kind: 'comment', title, text };
  return undefined;
}

const SUBMIT = `${HN_ORIGIN}/submit`;
const NEWEST = `${HN_ORIGIN}/newest`;
const LOGIN = `${HN_ORIGIN}/login`;
const COMMENT_FORM = 'form[action="comment"]';
const PROFILE_FORM = 'form.profileform';

const fill = (selector: string, value: string) => act('fill', { selector, value });
const click = (selector: string) => act('click', { selector });

/**
 * Where a plan stands: the first of its moves not yet made (in order), or the step that made each.
 * A read of the page is made already where the step before it answered the page itself.
 */
function progress(steps: readonly Step[], plan: readonly Action[]): { next: Action } | { made: Step[] } {
  const made: Step[] = [];
  let from = 0;
  for (const move of plan) {
    const before = made.at(-1);
    if ((move.name === 'get_text' || move.name === 'get_stories') && before && showsPage(before.result)) {
      made.push(before);
      continue;
    }
    const at = steps.findIndex((step, index) => index >= from && sameMove(step, move));
    if (at === -1) return { next: move };
    made.push(steps[at]!);
    from = at + 1;
  }
  return { made };
}

/** Runs of white space as one space: how text reads whatever the page's line breaks. */
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
const occurrences = (step: Step, text: string) => flat(readableText(step.result)).split(flat(text)).length - 1;

/** The story titled `title` on the front page or its page 2, read from the listings; or the move that reads the next one. */
function findStory(steps: readonly Step[], title: string): { story: string } | { next: Action } | { missing: string } {
  for (const address of [FRONT_PAGE, `${FRONT_PAGE}?p=2`]) {
    const opened = steps.findIndex((step) => step.name === 'navigate' && step.args.url === address);
    if (opened === -1) return { next: act('navigate', { url: address }) };
    const after = steps.slice(opened + 1);
    const until = after.findIndex((step) => step.name === 'navigate');
    const stories = (until === -1 ? after : after.slice(0, until)).map((step) => storiesIn(step.result)).find((found) => found !== undefined);
    if (!stories) return { next: act('get_stories') };
    const story = stories.find((row) => row.title === title);
    if (story) return { story: story.id };
  }
  return { missing: `There is no story titled "${title}" on the front page or its page 2.` };
}

/** The move a failed step calls for: a truthful failure at an error or a login wall. */
function stopped(step: Step | undefined, what: string): Action | undefined {
  if (!step) return undefined;
  if ('error' in step.result) return finish(false, `I could not ${what}: ${String(step.result.error)}.`);
  if (showsHnLoginWall(step.result)) return finish(false, `The site asked me to log in, so I could not ${what}.`);
  return undefined;
}

/** A comment or a reply: open the story, read it, write, send, read it again; claimed only if the text shows once more than before. */
function writeComment(steps: readonly Step[], form: Extract<Form, { kind: 'comment' | 'reply' }>): Action {
  const found = findStory(steps, form.title);
  if ('next' in found) return found.next;
  if ('missing' in found) return finish(false, found.missing);
  const item = act('navigate', { url: itemAddress(found.story) });
  // A reply is written on the reply page that the top comment's own reply link opens.
  const reply = form.kind === 'reply' ? [click('tr.comtr a[href^="reply?id="]')] : [];
  const plan = [item, act('get_text'), ...reply, fill(`${COMMENT_FORM} textarea[name="text"]`, form.text), click(`${COMMENT_FORM} input[type="submit"]`), item, act('get_text')];
  const state = progress(steps, plan);
  const what = form.kind === 'reply' ? "reply to the story's top comment" : 'comment on the story';
  if ('next' in state) return stopped(steps.at(-1), what) ?? state.next;
  const [before, after] = [state.made[1]!, state.made.at(-1)!];
  return occurrences(after, form.text) > occurrences(before, form.text)
    ? finish(true, `Wrote "${form.text}" ${form.kind === 'reply' ? 'in reply to the top comment of' : 'on'} story ${found.story}: its page shows it.`, [after.id])
    : finish(false, `Story ${found.story}'s page does not show "${form.text}" after I sent it.`);
}

/** A submission: fill the submit form, send it, and find the story on /newest. */
function submitStory(steps: readonly Step[], form: Extract<Form, { kind: 'submit' }>): Action {
  const send = click('form[action="r"] input[type="submit"]');
  const plan = [
    act('navigate', { url: SUBMIT }),
    fill('input[name="title"]', form.title),
    ...(form.url ? [fill('input[name="url"]', form.url)] : []),
    ...(form.text ? [fill('textarea[name="text"]', form.text)] : []),
    send,
    act('navigate', { url: NEWEST }),
    act('get_stories'),
  ];
  const state = progress(steps, plan);
  if ('next' in state) {
    const last = steps.at(-1);
    const landed = last && sameMove(last, send) ? urlIn(last.result) : undefined;
    if (landed !== undefined && new URL(landed, SUBMIT).pathname !== '/newest') return finish(false, `The site did not take the story: it answered ${landed}.`);
    return stopped(last, 'submit the story') ?? state.next;
  }
  const listed = state.made.at(-1)!;
  const story = storiesIn(listed.result)?.find((row) => row.title === form.title);
  return story
    ? finish(true, `Submitted "${form.title}": /newest lists it as ${story.id}.`, [listed.id])
    : finish(false, `/newest does not list "${form.title}" after I submitted it.`);
}

/**
 * The about: the account's own page (the top bar's link to it), the profile form, update; then
 * the page read again. Page text leaves a text box's content out, so where the read does not show
 * it, a selector (Playwright's `:text-is`) asks whether the about box holds exactly the text.
 */
function setAbout(history: History, steps: readonly Step[], form: Extract<Form, { kind: 'about' }>): Action {
  const box = `${PROFILE_FORM} textarea[name="about"]`;
  const me = click('#me');
  // Signed out, the top bar has no link to the account's page: its login link is the way there.
  if (steps.some((step) => sameMove(step, me) && 'error' in step.result)) {
    const login = act('navigate', { url: LOGIN });
    return steps.some((step) => sameMove(step, login)) ? finish(false, 'The site asked me to log in, so I could not set the about.') : login;
  }
  const plan = [act('navigate', { url: FRONT_PAGE }), me, fill(box, form.text), click(`${PROFILE_FORM} input[type="submit"]`), act('get_text')];
  const state = progress(steps, plan);
  if ('next' in state) return stopped(steps.at(-1), 'set the about') ?? state.next;
  const read = state.made.at(-1)!;
  if (occurrences(read, form.text) > 0) return finish(true, `The profile page shows the about "${form.text}".`, [read.id]);
  if (!history.tools.offers('has_class')) return finish(false, 'I cannot read the about back from the profile page, so I cannot tell that it is set.');
  const probe = act('has_class', { selector: `${box}:text-is(${JSON.stringify(form.text)})`, className: 'about' });
  const asked = steps.find((step) => sameMove(step, probe));
  if (!asked) return probe;
  return 'error' in asked.result ? finish(false, `The profile page's about does not read "${form.text}".`) : finish(true, `The profile page's about reads "${form.text}".`, [asked.id]);
}

/** Fills `form` with the offered tools; a truthful failure when the agent offers none that can. */
export function fillForm(history: History, form: Form): Action {
  if (!history.tools.offers('fill') || !history.tools.offers('click')) return finish(false, 'I cannot do this task: no offered tool fills in a form.');
  const steps = stepsSinceLogin(history) ?? history.steps;
  if (form.kind === 'submit') return submitStory(steps, form);
  if (form.kind === 'about') return setAbout(history, steps, form);
  return writeComment(steps, form);
}
