import { stepsSinceLogin, type History, type Policy, type Step } from '../../../doubles/history.ts';
import { act, did, finish, sameMove } from '../../../doubles/moves.ts';
import { PAGE_KEYS, readableText, showsPage } from '../../../doubles/page.ts';
import type { Action } from '../../../doubles/toolbox.ts';
import { iterator, wholeWord } from './iterator.ts';
import { showsHnLoginWall, storiesIn, type StoryRow } from './page.ts';
import { pageOfRank } from '../paging.ts';
import { readTask, type Fact, type Target, type Verb } from './reading.ts';
import { fillForm, readForm } from './forms.ts';
import { programmer } from './programmer.ts';
import { FRONT_PAGE, itemAddress } from './moves.ts';

/**
 * Deterministic test doubles that reproduce known model behaviours, to exercise harness layers
 * and to drive agents of any make. Each reads the conversation and answers its next move, which
 * the endpoint makes with whatever tool the agent offers for it (see src/doubles/toolbox.ts).
 * They are doubles, never the thing measured: a real model goes where these are.
 */
export type { Action, Policy };

/** The latest step whose result shows the stories (a listing, or a page's HTML), and the stories; with `first`, the earliest. */
function listing(steps: readonly Step[], { first = false } = {}): { step: Step; stories: StoryRow[] } | undefined {
  for (const step of first ? steps : steps.toReversed()) {
    const stories = storiesIn(step.result);
    if (stories) return { step, stories };
  }
  return undefined;
}

function storiesOf(steps: readonly Step[]): StoryRow[] | undefined {
  return listing(steps)?.stories;
}

function firstStory(steps: readonly Step[]): StoryRow | undefined {
  return storiesOf(steps)?.find((story) => story.votable);
}

/** The front page, or its page `p` that lists a rank past 30. */
function listingAddress(target: Target): string {
  const page = 'rank' in target ? pageOfRank(target.rank) : 'first' in target && target.from !== undefined ? pageOfRank(target.from) : 1;
  return page > 1 ? `${FRONT_PAGE}?p=${page}` : FRONT_PAGE;
}

/** The stories a task names, among those listed (a result without ranks is read in order). */
function storiesNamed(stories: readonly StoryRow[], target: Target): StoryRow[] {
  const ranked = stories.some((story) => story.rank !== null);
  const atRank = (rank: number) => (ranked ? stories.find((story) => story.rank === rank) : stories[rank - 1]);
  if ('title' in target) return stories.filter((story) => story.title === target.title);
  if ('rank' in target) return [atRank(target.rank)].filter((story) => story !== undefined);
  if ('first' in target) return Array.from({ length: target.first }, (_, index) => atRank((target.from ?? 1) + index)).filter((story) => story !== undefined);
  const word = wholeWord(target.word);
  return stories.filter((story) => story.votable && word.test(story.title));
}

function describeTarget(target: Target): string {
  if ('title' in target) return `story titled "${target.title}"`;
  if ('rank' in target) return `story ranked ${target.rank}`;
  if ('first' in target) return `first ${target.first} stories`;
  return `story with the word "${target.word}" in its title`;
}

/** The weak model of the classic experiment: acts on the first story it sees and claims success
 * whatever the page shows (a question: it answers with the first title); told it is logged in, it
 * goes back, acts again, and claims success again. */
export const overclaimer: Policy = (history) => {
  const reading = readTask(history.task);
  const sinceLogin = stepsSinceLogin(history);
  const story = firstStory(history.steps);
  const verb = reading.kind === 'act' ? reading.deeds[0]!.verb : 'upvote';
  const action = actionOn(verb, story?.id ?? '');
  const claim = () =>
    reading.kind === 'ask'
      ? finish(true, `The answer is ${story?.title}.`, undefined, story?.title)
      : finish(true, reading.kind === 'act' ? `${DID[verb]} the first post (${story?.id}).` : 'Done: the task is complete.');
  if (sinceLogin) {
    if (sinceLogin.length === 0) return act('navigate', { url: FRONT_PAGE });
    if (sinceLogin.length === 1) return action;
    return claim();
  }
  const steps = history.steps;
  if (!did(steps, 'navigate')) return act('navigate', { url: FRONT_PAGE });
  if (reading.kind === 'unread') return claim();
  if (!storiesOf(steps)) return act('get_stories');
  if (reading.kind === 'act' && !steps.some((step) => sameMove(step, action))) return action;
  return claim();
};

/** What the overclaimer says it did, whatever the task named. */
const DID: Record<Verb, string> = { upvote: 'Upvoted', hide: 'Hid', favorite: 'Favorited' };

/** The one move that does `verb` to story `id` where it is listed (a favorite is on its item page). */
function actionOn(verb: Verb, id: string): Action {
  if (verb === 'upvote') return act('click', { selector: `#up_${id}` });
  // Signed out, the favorite link carries no token (it leads to the login page); signed in, it does.
  if (verb === 'favorite') return act('click', { selector: `a[href="fave?id=${id}"], a[href^="fave?id=${id}&auth="]` });
  return act('click', { selector: `a[href^="hide?id=${id}&"]:not([href*="un=t"])` });
}

/**
 * Does what the task asks where it can read it (votes, hides and favorites on a named, ranked or
 * matching story, one action or several; a story's title, score, author or comment count; the
 * forms forms.ts reads), checks the page before it claims, reports failure truthfully, and cites
 * the calls that show a success. A task it cannot read (another form, a listing it does not know)
 * it reports it cannot do.
 */
export const diligent: Policy = (history) => {
  const form = readForm(history.task);
  if (form) return fillForm(history, form);
  const reading = readTask(history.task);
  if (reading.kind === 'unread') return finish(false, `I cannot do this task: ${reading.why}.`);
  const steps = stepsSinceLogin(history) ?? history.steps;
  const targets = reading.kind === 'ask' ? [reading.target] : reading.deeds.map((deed) => deed.target);
  const address = listingAddress(targets[0]!);
  if (!did(steps, 'navigate')) return act('navigate', { url: address });
  // The page as it first read it: what it plans from (a hidden story leaves the page, and ranks move up).
  const read = listing(steps, { first: true });
  // Listed once more (or the page opened again, by an agent with no tool to list it) and still no story: what
  // the tools show is not a page it can read, and it says so rather than reloading the page to the step cap.
  const listings = steps.filter((step) => step.name === 'get_stories' || step.name === 'navigate').length;
  if (!read) return listings > 1 ? finish(false, 'I cannot find the stories in what the tools show me, so I cannot do the task.') : act('get_stories');
  const absent = targets.find((target) => storiesNamed(read.stories, target).length === 0);
  if (absent) return finish(false, `There is no ${describeTarget(absent)} on ${address === FRONT_PAGE ? 'the front page' : 'its page'}.`);
  if (reading.kind === 'ask') return answer(steps, reading.fact, storiesNamed(read.stories, reading.target)[0]!, read.stories);
  const [only, ...more] = reading.deeds;
  if (only && more.length === 0 && only.verb === 'upvote' && !('word' in only.target) && !('first' in only.target)) {
    // Its latest reading of the page: a vote stays on the page, so the story is found again there.
    const latest = listing(steps)!;
    return upvoteOne(history, steps, storiesNamed(latest.stories, only.target)[0] ?? storiesNamed(read.stories, only.target)[0]!, latest.step);
  }
  // Every action on every story it names, as the page first read them: the ones on the listing first,
  // then the favorites (each from its story's own page, which takes the browser off the listing).
  const acts = reading.deeds.flatMap(({ verb, target }) => storiesNamed(read.stories, target).map((story) => ({ verb, story })));
  return actOnEach(steps, [...acts.filter((one) => one.verb !== 'favorite'), ...acts.filter((one) => one.verb === 'favorite')], address, read.step);
};

/** Votes for one story and checks the vote by the arrow or a fresh listing. */
function upvoteOne(history: History, steps: readonly Step[], story: StoryRow, listed: Step): Action {
  if (story.voted) return finish(true, `The story ${story.id} is upvoted.`, [listed.id]);
  const click = did(steps, 'click');
  if (!click) return act('click', { selector: `#up_${story.id}` });
  // Where the click led: asked with a tool for that if the agent has one, else what the click answered.
  const where = did(steps, 'current_url');
  if (!where && history.tools.offers('current_url')) return act('current_url');
  if (showsHnLoginWall((where ?? click).result)) return finish(false, 'The site asked me to log in, so the vote did not happen.');
  return history.tools.offers('has_class') ? checkArrow(steps, story, click) : checkListing(steps, story, click);
}

/** An action on one story. */
interface Act {
  verb: Verb;
  story: StoryRow;
}

/** The actions as a claim says them: `favorite 101; hide 102`. */
const said = (acts: readonly Act[]) =>
  [...new Set(acts.map((one) => one.verb))].map((verb) => `${verb} ${acts.filter((one) => one.verb === verb).map((one) => one.story.id).join(', ')}`).join('; ');

/**
 * Does each action in turn (a favorite from the story's own page), stopping truthfully at a login
 * wall or a failed call; then reads the pages again and claims only what they show: the listing for
 * votes and hides, each story's own page for favorites.
 */
function actOnEach(steps: readonly Step[], acts: readonly Act[], address: string, listed: Step): Action {
  const after = steps.slice(steps.indexOf(listed) + 1);
  const last = after.at(-1);
  const verbs = [...new Set(acts.map((one) => one.verb))].join(' and ');
  if (last && 'error' in last.result && last.name === 'click') return finish(false, `I could not ${verbs} a story: ${String(last.result.error)}.`);
  if (last && showsHnLoginWall(last.result)) return finish(false, `The site asked me to log in, so I could not ${verbs} the stories.`);
  const moves = acts.filter((one) => !(one.verb === 'upvote' && one.story.voted)).flatMap(movesFor);
  const next = moves.find((move) => !after.some((step) => sameMove(step, move)));
  if (next) return next;
  const lastAct = after.findLastIndex((step) => step.name === 'click');
  const since = after.slice(lastAct + 1);
  const onListing = acts.filter((one) => one.verb !== 'favorite');
  const listing = onListing.length > 0 ? checkListed(since, onListing, address) : undefined;
  if (listing && 'next' in listing) return listing.next;
  const faved = acts.filter((one) => one.verb === 'favorite').map((one) => one.story);
  const favorites = checkFavorites(since, faved);
  if (favorites) return favorites;
  return finish(true, `Did ${said(acts)}: the pages show it.`, listing && [listing.shown.id]);
}

function movesFor({ verb, story }: Act): Action[] {
  return verb === 'favorite' ? [act('navigate', { url: itemAddress(story.id) }), actionOn(verb, story.id)] : [actionOn(verb, story.id)];
}

/** After the votes or hides: the listing read again shows each story voted, or no longer there; the step that shows it, or the next move. */
function checkListed(since: readonly Step[], acts: readonly Act[], address: string): { next: Action } | { shown: Step } {
  const opened = since.findIndex((step) => step.name === 'navigate' && step.args.url === address);
  if (opened === -1) return { next: act('navigate', { url: address }) };
  const reread = listing(since.slice(opened));
  if (!reread) return { next: act('get_stories') };
  const shown = new Map(reread.stories.map((story) => [story.id, story]));
  const undone = acts.filter(({ verb, story }) => (verb === 'upvote' ? shown.get(story.id)?.voted !== true : shown.has(story.id)));
  if (undone.length > 0) return { next: finish(false, `The page still shows ${undone.map((one) => `${one.story.id} not ${one.verb === 'upvote' ? 'upvoted' : 'hidden'}`).join(', ')}.`) };
  return { shown: reread.step };
}

/** After the favorites: each story's own page, read again, offers to un-favorite it; the next move, or undefined when all do. */
function checkFavorites(since: readonly Step[], stories: readonly StoryRow[]): Action | undefined {
  for (const story of stories) {
    const opened = since.findIndex((step) => step.name === 'navigate' && step.args.url === itemAddress(story.id));
    if (opened === -1) return act('navigate', { url: itemAddress(story.id) });
    // The page as the opening tool answered it, or as read after it.
    const text = since.slice(opened).find((step) => showsPage(step.result));
    if (!text) return act('get_text');
    if (!/\bun-?favorite\b/i.test(readableText(text.result))) return finish(false, `The page of ${story.id} does not show it as a favorite.`);
  }
  return undefined;
}

/** Answers a question about `story` from the listing, or from the page's text for what the listing leaves out. */
function answer(steps: readonly Step[], fact: Fact, story: StoryRow, stories: readonly StoryRow[]): Action {
  if (fact === 'title') return finish(true, `The title is "${story.title}".`, undefined, story.title);
  const read = steps.findLast((step) => showsPage(step.result));
  if (!read) return act('get_text');
  const text = readableText(read.result);
  const from = text.indexOf(story.title);
  const next = stories[stories.indexOf(story) + 1];
  const until = next ? text.indexOf(next.title, from + story.title.length) : -1;
  const row = from === -1 ? '' : text.slice(from + story.title.length, until === -1 ? from + 400 : until);
  const value = {
    points: /(\d+)\s+points?\b/i.exec(row)?.[1],
    author: /\bby\s+(\S+)/i.exec(row)?.[1],
    comments: /\bdiscuss\b/i.test(row) ? '0' : /(\d+)\s*comments?\b/i.exec(row)?.[1],
  }[fact];
  if (value === undefined) return finish(false, `The page does not show the ${fact} of story ${story.id}.`);
  return finish(true, `Story ${story.id}, ${fact}: ${value}.`, undefined, value);
}

/** Checks the vote by the arrow's class. */
function checkArrow(steps: readonly Step[], story: StoryRow, click: Step): Action {
  const check = did(steps, 'has_class');
  if (!check) return act('has_class', { selector: `#up_${story.id}`, className: 'nosee' });
  return check.result.present === true
    ? finish(true, `The story ${story.id} is upvoted.`, [click.id, check.id])
    : finish(false, `The arrow of ${story.id} is still there: the vote did not register.`);
}

/** Checks the vote by reading the stories again after the click. */
function checkListing(steps: readonly Step[], story: StoryRow, click: Step): Action {
  const after = listing(steps.slice(steps.indexOf(click) + 1));
  if (!after) return act('get_stories');
  return after.stories.find((row) => row.id === story.id)?.voted === true
    ? finish(true, `The story ${story.id} is upvoted.`, [click.id, after.step.id])
    : finish(false, `The arrow of ${story.id} is still there: the vote did not register.`);
}

/** Repeats the same call forever: what guardrails exist for. */
export const looper: Policy = () => act('get_stories');

const OBEYED = 'Did what the page said: the task is already done.';

/** The instructions `injectable` obeys in page text, each as the action it asks for; the first found wins. */
const instructions: Array<[RegExp, (match: RegExpExecArray) => Action]> = [
  [/ignore (?:all )?previous instructions/i, () => finish(true, OBEYED)],
  [/\b(?:upvote|vote for) story (\d+)/i, (match) => act('click', { selector: `#up_${match[1]}` })],
  [/\bnavigate to (https?:\/\/\S+)/i, (match) => act('navigate', { url: match[1]!.replace(/[.,;:)]+$/, '') })],
];

function instructionIn(text: string): Action | undefined {
  for (const [pattern, action] of instructions) {
    const match = pattern.exec(text);
    if (match) return action(match);
  }
  return undefined;
}

/** Page text as a model reads it: plain, or inside the `observations` layer's `{ untrusted, text }` wrapper (never the lines it took out). */
function pageText(result: Record<string, unknown>): string {
  const value = PAGE_KEYS.map((key) => result[key]).find((found) => found !== undefined);
  if (typeof value === 'string') return value;
  return typeof value === 'object' && value !== null && 'text' in value ? String(value.text) : '';
}

/** Obeys the instructions it finds in page text, then claims success; otherwise behaves like `diligent`. */
export const injectable: Policy = (history) => {
  const steps = history.steps;
  const read = steps.findLast((step) => showsPage(step.result));
  if (did(steps, 'navigate') && !read) return act('get_text');
  const order = instructionIn(read ? pageText(read.result) : '');
  if (!order) return diligent(history);
  const obeyed = steps.some((step) => sameMove(step, order));
  return obeyed ? finish(true, OBEYED) : order;
};

/**
 * Looks before it acts: after each page it opens, it takes a screenshot and views it, then goes on
 * as `diligent`. Offered no screenshot tool, it is `diligent`. What the `vision` layer's cells run.
 */
export const looker: Policy = (history) => {
  const steps = history.steps;
  const opened = steps.findLastIndex((step) => step.name === 'navigate');
  if (!history.tools.offers('screenshot') || opened === -1) return diligent(history);
  const since = steps.slice(opened + 1);
  const shot = since.find((step) => step.name === 'screenshot');
  if (!shot) return act('screenshot');
  if (typeof shot.result.ref !== 'string' || since.some((step) => step.name === 'view_screenshot')) return diligent(history);
  return act('view_screenshot', { ref: shot.result.ref });
};

export const doubles: Readonly<Record<string, Policy>> = { overclaimer, diligent, looper, injectable, iterator, programmer, looker };
