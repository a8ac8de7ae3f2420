import { test } from '@playwright/test';
import { judge } from '../src/eval/oracle.ts';
import { upvoted, upvotedTitled } from '../src/eval/postconditions.ts';
import { expect } from './support.ts';

const ranking = [
  { rank: 1, id: '101', title: 'first' },
  { rank: 2, id: '102', title: 'second' },
];
const snapshot = (votes: Record<string, string[]>) => ({ votes, ranking });

test('upvoted({ rank }) reads the ranking at the start and the votes at the end', () => {
  const first = upvoted({ rank: 1 });
  expect(first.check({ start: snapshot({}), end: snapshot({ harness: ['101'] }), user: 'harness' })).toEqual({ holds: true, detail: 'story 101 (rank 1) is upvoted by harness' });
  expect(first.check({ start: snapshot({}), end: snapshot({ harness: ['102'] }), user: 'harness' }).holds).toBe(false);
  expect(first.check({ start: snapshot({}), end: snapshot({ someone: ['101'] }), user: 'harness' }).holds).toBe(false);
  // The story that was first at the start counts, even if the front page changed since.
  const reordered = { votes: { harness: ['101'] }, ranking: [{ ...ranking[1]!, rank: 1 }, { ...ranking[0]!, rank: 2 }] };
  expect(first.check({ start: snapshot({}), end: reordered, user: 'harness' }).holds).toBe(true);
  expect(upvoted({ rank: 9 }).check({ start: snapshot({}), end: snapshot({}), user: 'harness' })).toEqual({ holds: false, detail: 'no story ranked 9 at the start' });
});

test('the oracle holds a run actual only when every postcondition holds, and never with none', () => {
  const evidence = { start: snapshot({}), end: snapshot({ harness: ['101'] }), user: 'harness' };
  expect(judge([upvoted({ rank: 1 })], evidence).actual).toBe(true);
  expect(judge([upvoted({ rank: 1 }), upvoted({ rank: 2 })], evidence)).toMatchObject({ actual: false, verdicts: [{ holds: true }, { holds: false }] });
  expect(judge([], evidence).actual).toBe(false);
});

test('upvotedTitled finds the story by its title at the start; an unknown title never holds', () => {
  const second = upvotedTitled({ title: 'second' });
  expect(second.check({ start: snapshot({}), end: snapshot({ harness: ['102'] }), user: 'harness' }).holds).toBe(true);
  expect(second.check({ start: snapshot({}), end: snapshot({ harness: ['101'] }), user: 'harness' }).holds).toBe(false);
  expect(upvotedTitled({ title: 'never posted' }).check({ start: snapshot({}), end: snapshot({ harness: ['101', '102'] }), user: 'harness' })).toEqual({
    holds: false,
    detail: 'no story titled "never posted" at the start',
  });
});
