import { ORDINAL_WORDS } from '../../../text.ts';
import { firstRankOn } from '../paging.ts';

/**
 * A task's prompt as the doubles read it: a weak model's reading, a few words and a quoted title,
 * nothing more. A task of several actions ("favorite the first story and hide the second") is read
 * clause by clause, each an action on the stories it names. What it cannot read plainly (a listing
 * other than the front page) it leaves unread, and the doubles then say they cannot do the task;
 * the forms `diligent` fills are read in forms.ts, and any other form is left unread here.
 */

/** What the doubles can do to a story. */
export type Verb = 'upvote' | 'hide' | 'favorite';
/** What the doubles can read of a story on a listing. */
export type Fact = 'title' | 'points' | 'author' | 'comments';

/** Which stories a task names: one by rank or title, the first few, or every one whose title has a word. */
export type Target = { rank: number } | { title: string } | { first: number; /** The rank the first is at (31 on page 2). */ from?: number } | { word: string };

/** One action a task asks for: what to do, to which stories. */
export interface Deed {
  verb: Verb;
  target: Target;
}

/** What a task asks: actions (one or more, in the prompt's order), a fact to answer, or nothing the doubles can read. */
export type Reading = { kind: 'act'; deeds: Deed[] } | { kind: 'ask'; fact: Fact; target: Target } | { kind: 'unread'; why: string };

const NUMBERS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

const numberOf = (word: string) => (/^\d+$/.test(word) ? Number(word) : NUMBERS.indexOf(word.toLowerCase()) + 1);

/** The word a task asks about: `… contains the word "for".` */
export const wordIn = (prompt: string) => /\bthe word "([^"]+)"/i.exec(prompt)?.[1];

/** The page of the front page a prompt names ("page 2 of the Hacker News front page"): 1 unless it says another. */
const pageIn = (prompt: string) => Number(/\bpage (\d+) of\b/i.exec(prompt)?.[1] ?? 1);

/** The stories `text` names; "the first", "the second" count from the top of the page the prompt names. */
function targetIn(text: string, prompt: string): Target | undefined {
  const title = /\b(?:titled|called|named)\s+"([^"]+)"/i.exec(text)?.[1];
  if (title !== undefined) return { title };
  const word = wordIn(text);
  if (word !== undefined) return { word };
  const above = firstRankOn(pageIn(prompt)) - 1;
  const few = new RegExp(`\\bfirst\\s+(\\d+|${NUMBERS.join('|')})\\s+stor`, 'i').exec(text)?.[1];
  if (few !== undefined) return { first: numberOf(few), ...(above > 0 && { from: above + 1 }) };
  const rank = /\brank(?:ed)?\s+(?:#|number\s+)?(\d+)/i.exec(text)?.[1];
  if (rank !== undefined) return { rank: Number(rank) };
  const ordinal = new RegExp(`\\b(${ORDINAL_WORDS.join('|')})\\b`, 'i').exec(text)?.[1];
  if (ordinal !== undefined) return { rank: above + ORDINAL_WORDS.indexOf(ordinal.toLowerCase() as (typeof ORDINAL_WORDS)[number]) + 1 };
  return undefined;
}

/** Verbs by where they first appear; a verb after "not" or "without" is what the task forbids, not asks. */
function verbsIn(prompt: string): Verb[] {
  const found: Array<[number, Verb]> = [];
  for (const [verb, pattern] of [
    ['upvote', /\b(?:up)?vote\b/gi],
    ['hide', /\bhide\b/gi],
    ['favorite', /\bfav(?:e|ou?rite)s?\b/gi],
  ] as const) {
    for (const match of prompt.matchAll(pattern)) {
      const before = prompt.slice(Math.max(0, match.index - 20), match.index);
      if (!/\b(?:not|n't|without|never|nor)\b/i.test(before)) found.push([match.index, verb]);
    }
  }
  return [...new Set(found.sort(([a], [b]) => a - b).map(([, verb]) => verb))];
}

/** The fact a question asks for, if it is one the doubles can read off a listing. */
function factIn(question: string): Fact | undefined {
  if (/\bcomments?\b/i.test(question)) return /\bhow many comments\b/i.test(question) ? 'comments' : undefined;
  if (/\bwho\b|\bposted\b|\bsubmitted\b|\bauthor\b/i.test(question)) return 'author';
  if (/\bpoints\b|\bscore\b/i.test(question)) return 'points';
  if (/\btitle\b/i.test(question)) return 'title';
  return undefined;
}

/** A prompt's text with its quoted parts blanked out (same length), so a title's words are never read as the prompt's own. */
const unquoted = (prompt: string) => prompt.replace(/"[^"]*"/g, (quoted) => ' '.repeat(quoted.length));

/**
 * The prompt's clauses, each with the actions it asks: split where "and" or "then" join two verbs
 * (outside quotes), a clause with no verb of its own going with the one before ("ranks 1, 2 and 3").
 */
function clausesOf(prompt: string): string[] {
  const bare = unquoted(prompt);
  const clauses: string[] = [];
  let from = 0;
  for (const match of bare.matchAll(/\b(?:and|then)\b|;/gi)) {
    const piece = prompt.slice(from, match.index);
    if (verbsIn(unquoted(piece)).length > 0 || clauses.length === 0) clauses.push(piece);
    else clauses[clauses.length - 1] += piece;
    from = match.index;
  }
  const rest = prompt.slice(from);
  if (verbsIn(unquoted(rest)).length > 0 || clauses.length === 0) clauses.push(rest);
  else clauses[clauses.length - 1] += rest;
  return clauses;
}

export function readTask(prompt: string): Reading {
  if (/\b(?:reply|comment on|submit|about|profile|unhide|un-hide|unfav\w*|un-fav\w*|karma|newest|show hn|ask hn|job)\b/i.test(prompt)) {
    return { kind: 'unread', why: 'the task asks for something I cannot do with these tools' };
  }
  const target = targetIn(prompt, prompt);
  if (!target) return { kind: 'unread', why: 'I cannot tell which story the task means' };
  if (/^\s*(?:what|who|how|which)\b|\?\s*$/im.test(prompt)) {
    const fact = factIn(prompt);
    return fact ? { kind: 'ask', fact, target } : { kind: 'unread', why: 'I cannot read that from the page' };
  }
  // A vote or favorite on a comment, or on the story a comment count picks out, is beyond these doubles.
  if (/\bcomments?\b/i.test(prompt)) return { kind: 'unread', why: 'the task is about comments, which I cannot act on' };
  const deeds = clausesOf(prompt).flatMap((clause) => verbsIn(unquoted(clause)).map((verb) => ({ verb, target: targetIn(clause, prompt) ?? target })));
  if (deeds.length === 0) return { kind: 'unread', why: 'the task names no action I know' };
  return { kind: 'act', deeds };
}
