import { ORDINAL_WORDS } from '../../../text.ts';

/**
 * A task's prompt as the doubles read it: a weak model's reading, a few words and a quoted title,
 * nothing more. What it cannot read plainly (two actions in one task, a listing other than the
 * front page) it leaves unread, and the doubles then say they cannot do the task; the forms
 * `diligent` fills are read in forms.ts, and any other form is left unread here.
 */

/** What the doubles can do to a story. */
export type Verb = 'upvote' | 'hide' | 'favorite';
/** What the doubles can read of a story on a listing. */
export type Fact = 'title' | 'points' | 'author' | 'comments';

/** Which stories a task names: one by rank or title, the first few, or every one whose title has a word. */
export type Target = { rank: number } | { title: string } | { first: number } | { word: string };

export type Reading = { kind: 'act'; verb: Verb; target: Target } | { kind: 'ask'; fact: Fact; target: Target } | { kind: 'unread'; why: string };

const NUMBERS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

const numberOf = (word: string) => (/^\d+$/.test(word) ? Number(word) : NUMBERS.indexOf(word.toLowerCase()) + 1);

/** The word a task asks about: `… contains the word "for".` */
export const wordIn = (prompt: string) => /\bthe word "([^"]+)"/i.exec(prompt)?.[1];

function targetIn(prompt: string): Target | undefined {
  const title = /\b(?:titled|called|named)\s+"([^"]+)"/i.exec(prompt)?.[1];
  if (title !== undefined) return { title };
  const word = wordIn(prompt);
  if (word !== undefined) return { word };
  const few = new RegExp(`\\bfirst\\s+(\\d+|${NUMBERS.join('|')})\\s+stor`, 'i').exec(prompt)?.[1];
  if (few !== undefined) return { first: numberOf(few) };
  const rank = /\brank(?:ed)?\s+(?:#|number\s+)?(\d+)/i.exec(prompt)?.[1];
  if (rank !== undefined) return { rank: Number(rank) };
  const ordinal = new RegExp(`\\b(${ORDINAL_WORDS.join('|')})\\b`, 'i').exec(prompt)?.[1];
  if (ordinal !== undefined) return { rank: ORDINAL_WORDS.indexOf(ordinal.toLowerCase() as (typeof ORDINAL_WORDS)[number]) + 1 };
  return undefined;
}

/** Verbs by where they first appear; a verb after "not" or "without" is what the task forbids, not asks. */
function verbsIn(prompt: string): Verb[] {
  const found: Array<[number, Verb]> = [];
  for (const [verb, pattern] of [
    ['upvote', /\b(?:up)?vote\b/gi],
    ['hide', /\bhide\b/gi],
    ['favorite', /\bfav(?:e|ou?rite)\b/gi],
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

export function readTask(prompt: string): Reading {
  if (/\b(?:reply|comment on|submit|about|profile|unhide|un-hide|unfav\w*|un-fav\w*|karma|newest|show hn|ask hn|job)\b/i.test(prompt)) {
    return { kind: 'unread', why: 'the task asks for something I cannot do with these tools' };
  }
  const target = targetIn(prompt);
  if (!target) return { kind: 'unread', why: 'I cannot tell which story the task means' };
  if (/^\s*(?:what|who|how|which)\b|\?\s*$/im.test(prompt)) {
    const fact = factIn(prompt);
    return fact ? { kind: 'ask', fact, target } : { kind: 'unread', why: 'I cannot read that from the page' };
  }
  // A vote or favorite on a comment, or on the story a comment count picks out, is beyond these doubles.
  if (/\bcomments?\b/i.test(prompt)) return { kind: 'unread', why: 'the task is about comments, which I cannot act on' };
  const verbs = verbsIn(prompt);
  if (verbs.length !== 1) return { kind: 'unread', why: verbs.length === 0 ? 'the task names no action I know' : 'the task asks for more than one kind of action' };
  return { kind: 'act', verb: verbs[0]!, target };
}

/** Hacker News lists 30 stories a page: the page a rank is on. */
