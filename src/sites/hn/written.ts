import * as cheerio from 'cheerio';
import type { Element } from 'domhandler';
import { z } from 'zod';
import type { SessionView, Verdict } from '../../core/task.ts';
import { parseInput } from '../../input.ts';
import { sameText } from '../../text.ts';
import { postedInRun, type HnEvidence, type HnPostcondition } from './postconditions.ts';
import { profileSchema, type HnComment, type Submission } from './snapshot.ts';
import { callOf, describeTarget, findTarget, missingOf, onTarget, targetSchema, type Picked, type Item, type TargetInput } from './targets.ts';
import { seenStories, sessionUser } from './tasks/seen.ts';

/**
 * Hacker News's postconditions on what the run's user writes: a comment (or a reply), a story
 * submitted, the profile's fields. Each is judged on the posts the run added (never one the start
 * had) and checks itself on the page where the session would see it.
 */

// ---------------------------------------------------------------------------------------------
// Comments.

/** A comment row's text (2017–2020's `span.commtext` is left open around the reply link by a paragraph). */
function commentText($: cheerio.CheerioAPI, row: Element): string {
  const text = $(row).find('.commtext').first().clone();
  text.find('.reply').remove();
  return text.text();
}

/** The session sees a comment reading `text` on the story's page: anywhere in its thread for the story itself, or under the parent comment's row (one indent deeper or more). */
async function commentSeen(session: SessionView, { id: parent, story, named }: Item, text: string): Promise<Verdict> {
  const path = `/item?id=${encodeURIComponent(story)}`;
  const { status, html } = await session.load(path);
  if (status !== 200) throw new Error(`${path} answered HTTP ${status}`);
  const $ = cheerio.load(html);
  const rows = $('tr.comtr');
  const indent = (index: number) => Number(rows.eq(index).find('td.ind img').attr('width') ?? 0);
  const under = parent === story ? -1 : rows.toArray().findIndex((row) => row.attribs.id === parent);
  if (parent !== story && under < 0) return { holds: false, detail: `${named} is not on ${story}'s page` };
  for (let index = under + 1; index < rows.length; index += 1) {
    if (under >= 0 && indent(index) <= indent(under)) break;
    if (sameText(commentText($, rows[index]!), text)) return { holds: true, detail: `the comment ${JSON.stringify(text)} shows under ${named}` };
  }
  return { holds: false, detail: `no comment reading ${JSON.stringify(text)} shows under ${named}` };
}

/**
 * The run's user wrote a new comment with `text` right under the item `pick` finds at the start (a
 * story, or the comment it replies to). Only the first such comment is the one asked for: a second
 * copy of it, like any other comment, is a side effect. Resolved, it is bound to that parent (one
 * the start lacks is bad input, `call` naming it, unless the task is infeasible), and checks the
 * session sees the comment there.
 */
export function commentedUnder({ what, text, pick, call }: { what: string; text: string; pick: (start: HnEvidence['start']) => Picked; call?: string }): HnPostcondition {
  const description = `${what} with the text ${JSON.stringify(text)}`;
  return onTarget({
    call: call ?? description,
    description,
    reads: ['comments'],
    pick,
    missing: missingOf,
    bound: (parent) => {
      const written = (evidence: HnEvidence) => postedInRun(evidence, 'comments');
      const asked = (evidence: HnEvidence): HnComment | undefined =>
        'missing' in parent ? undefined : written(evidence).find((comment) => comment.parent === parent.id && sameText(comment.text, text));
      return {
        description,
        reads: ['comments'],
        judge(evidence) {
          if ('missing' in parent) return { holds: false, detail: parent.missing };
          const comment = asked(evidence);
          if (comment) return { holds: true, detail: `${evidence.user} wrote ${comment.id} under ${parent.named}: ${JSON.stringify(comment.text)}` };
          const others = written(evidence).map((other) => `${other.id} under ${other.parent}: ${JSON.stringify(other.text)}`);
          return { holds: false, detail: `no comment by ${evidence.user} under ${parent.named} reads ${JSON.stringify(text)}${others.length > 0 ? ` (wrote ${others.join('; ')})` : ''}` };
        },
        expects: (change, evidence) => change.kind === 'comment' && change.id === asked(evidence)?.id,
        check: async (session) => ('missing' in parent ? { holds: false, detail: parent.missing } : commentSeen(session, parent, text)),
      };
    },
  });
}

const commentedSchema = z.strictObject({ on: targetSchema, text: z.string().trim().min(1, 'expected the text the comment says') });

/** The run's user wrote a comment reading `text` (white space aside) right under the item `on` names at the start: a story, or a comment (a reply). */
export function commented(options: { on: TargetInput; text: string }): HnPostcondition {
  const { on, text } = parseInput(commentedSchema, options, 'hn.commented()');
  return commentedUnder({ what: `a comment under ${describeTarget(on)}`, text, call: callOf('commented', options), pick: (start) => findTarget(start, on) });
}

// ---------------------------------------------------------------------------------------------
// Submissions.

/** The story a task asks to submit: exactly this title, this link (none for a text post) and, when given, this text. */
const wantedSchema = z.strictObject({
  title: z.string().trim().min(1, 'expected the title'),
  url: z.url().optional(),
  text: z.string().optional(),
});
export type Wanted = z.output<typeof wantedSchema>;

function isWanted(story: Submission, wanted: Wanted): boolean {
  return story.title.trim() === wanted.title && story.url === wanted.url && (wanted.text === undefined || sameText(story.text ?? '', wanted.text));
}

const describeWanted = (wanted: Wanted) => `"${wanted.title}"${wanted.url ? ` (${wanted.url})` : ' (a text post)'}`;

/** What the session sees of a submitted story: on `/newest`, titled and linked as wanted. */
async function seenOnNewest(session: SessionView, wanted: Wanted): Promise<Verdict> {
  const story = (await seenStories(session, '/newest')).find((row) => row.title === wanted.title && (wanted.url === undefined ? row.href.startsWith('item?id=') : row.href === wanted.url));
  return story ? { holds: true, detail: `/newest lists ${describeWanted(wanted)} (${story.id})` } : { holds: false, detail: `/newest does not list ${describeWanted(wanted)}` };
}

/**
 * Exactly one story as wanted (the title; the link, or none for a text post; the text when given)
 * is submitted by the run's user; any other submission is a side effect. It names nothing the start
 * must have. The session's check: `/newest` lists it.
 */
export function submitted(wanted: z.input<typeof wantedSchema>): HnPostcondition {
  const story = parseInput(wantedSchema, wanted, 'hn.submitted()');
  return {
    description: `the story ${describeWanted(story)} is submitted once`,
    reads: ['submissions'],
    judge(evidence) {
      const mine = postedInRun(evidence, 'submissions');
      const matching = mine.filter((candidate) => isWanted(candidate, story));
      if (matching.length === 1) return { holds: true, detail: `${evidence.user} submitted ${describeWanted(story)} as ${matching[0]!.id}` };
      if (matching.length > 1) return { holds: false, detail: `${evidence.user} submitted ${describeWanted(story)} ${matching.length} times` };
      const others = mine.map((other) => describeWanted({ title: other.title, url: other.url })).join(', ');
      return { holds: false, detail: `${evidence.user} did not submit ${describeWanted(story)}${others ? `; submitted ${others}` : ''}` };
    },
    expects: (change, evidence) => change.kind === 'submission' && postedInRun(evidence, 'submissions').some((candidate) => candidate.id === change.id && isWanted(candidate, story)),
    check: (session) => seenOnNewest(session, story),
  };
}

// ---------------------------------------------------------------------------------------------
// The profile.

/** The profile's fields a task may ask for, at least one. */
const profileFieldsSchema = profileSchema.partial().strict().refine((fields) => Object.keys(fields).length > 0, `expected a field to set: ${Object.keys(profileSchema.shape).join(', ')}`);
type ProfileFields = z.output<typeof profileFieldsSchema>;

/** The session's own user page shows each field as asked (its form's text boxes). */
async function profileShown(session: SessionView, fields: ProfileFields): Promise<Verdict> {
  const user = await sessionUser(session);
  if (!user) return { holds: false, detail: 'the session is not logged in' };
  const $ = cheerio.load((await session.load(`/user?id=${encodeURIComponent(user)}`)).html);
  return allFields(fields, (field, value) => {
    const shown = $(`textarea[name="${field}"]`).text();
    return { holds: shown === value, detail: `${user}'s page shows the ${field} ${JSON.stringify(shown)}` };
  });
}

/** One verdict over every field asked for. */
function allFields(fields: ProfileFields, verdict: (field: string, value: string) => Verdict): Verdict {
  const verdicts = Object.entries(fields).map(([field, value]) => verdict(field, value));
  return { holds: verdicts.every((one) => one.holds), detail: verdicts.map((one) => one.detail).join('; ') };
}

/**
 * The run's user's profile reads each field as asked at the end, and the run changed it (a field
 * that already read so is not the run's work). It expects edits of the user's own profile only.
 * The session's check: its own user page shows the fields.
 */
export function profileSet(fields: z.input<typeof profileFieldsSchema>): HnPostcondition {
  const wanted = parseInput(profileFieldsSchema, fields, 'hn.profileSet()');
  return {
    description: `the account's ${Object.entries(wanted)
      .map(([field, value]) => `${field} is ${JSON.stringify(value)}`)
      .join(' and ')}`,
    reads: ['profiles'],
    judge({ start, end, diff, user }) {
      if (end.profiles === undefined) return { holds: false, detail: 'the site shows no profiles' };
      const edited = diff.some((change) => change.kind === 'profile' && change.user === user);
      return allFields(wanted, (field, value) => {
        const [before, after] = [start.profiles?.[user]?.[field as keyof ProfileFields], end.profiles?.[user]?.[field as keyof ProfileFields]];
        if (before === value) return { holds: false, detail: `${user}'s ${field} already read ${JSON.stringify(value)} at the start: not the run's work` };
        if (after !== value || !edited) return { holds: false, detail: `${user}'s ${field} is ${JSON.stringify(after ?? '')}, not ${JSON.stringify(value)}` };
        return { holds: true, detail: `${user}'s ${field} is ${JSON.stringify(value)}` };
      });
    },
    expects: (change, { user }) => change.kind === 'profile' && change.user === user && change.id === user,
    check: (session) => profileShown(session, wanted),
  };
}
