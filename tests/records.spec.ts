import { expect, test } from '@playwright/test';
import { boundAtStart, defineTask, judge, notFound as notFoundOfMain, type Postcondition } from 'harness-eval';
import { fieldChanged, nothingElseTouched, notFound, recordAdded, recordRemoved, type Records } from 'harness-eval/sites';
import { resolveAll } from '../src/eval/postconditions.ts';
import { startingLists, type TodoItem, type TodoSnapshot } from '../examples/todo-kit/app.ts';
import { todoDiff, type TodoChange } from '../examples/todo-kit/site.ts';

/**
 * The generic postconditions over records (src/eval/records.ts), on the to-do kit's state: its
 * items, read as records, judged from its snapshots and its own diff, in-process.
 */

type Item = TodoItem & { list: string };
/** The to-do kit's items as records: every list's items, each with its list's id. */
const items: Records<TodoSnapshot, Item> = {
  noun: 'item',
  read: (state) => state.lists.flatMap((list) => list.items.map((item) => ({ ...item, list: list.id }))),
  id: (item) => item.id,
};

const fresh = (): TodoSnapshot => ({ lists: startingLists() });
/** The start, and an end made from a copy of it by `change`. */
function run(change: (end: TodoSnapshot) => void = () => {}) {
  const start = fresh();
  const end = structuredClone(start);
  change(end);
  return { start, end, diff: todoDiff(start, end), user: 'ada' };
}
const item = (state: TodoSnapshot, id: string) => state.lists.flatMap((list) => list.items).find((candidate) => candidate.id === id)!;
const list = (state: TodoSnapshot, id: string) => state.lists.find((candidate) => candidate.id === id)!;
const add = (state: TodoSnapshot, listId: string, id: string, text: string, done = false) => list(state, listId).items.push({ id, text, done });
const remove = (state: TodoSnapshot, id: string) => {
  for (const each of state.lists) each.items = each.items.filter((candidate) => candidate.id !== id);
};

type Todo = Postcondition<TodoSnapshot, TodoChange>;
/** As the oracle judges a run: bound to its start, then judged on the evidence. */
const judged = (postconditions: Todo[], evidence: ReturnType<typeof run>) => judge(resolveAll(postconditions, evidence.start), evidence);

const milkDone = fieldChanged(items, { what: 'Milk', pick: { text: 'Milk' }, field: 'done', to: true, kinds: ['done'] });

test.describe('a field of a record fixed at the start changed to a value', () => {
  test('done: the change is the run\'s, expected, and no side effect', async () => {
    const verdict = await judged([milkDone], run((end) => (item(end, '1').done = true)));
    expect(verdict).toEqual({ actual: true, verdicts: [{ description: 'Milk: done changed to true', holds: true, detail: 'item 1: done changed from false to true' }], sideEffects: [] });
  });

  test('not done: it does not hold, saying what the field is', async () => {
    const verdict = await judged([milkDone], run());
    expect(verdict.actual).toBe(false);
    expect(verdict.verdicts[0]!.detail).toBe('item 1: done is false, not true');
  });

  test('changed to another value, or already the value at the start: it does not hold', async () => {
    const renamed = fieldChanged(items, { pick: { text: 'Milk' }, field: 'text', to: 'Oat milk' });
    expect(await renamed.judge(run((end) => (item(end, '1').text = 'Soy milk')))).toEqual({ holds: false, detail: 'item 1: text is "Soy milk", not "Oat milk"' });
    expect((await renamed.judge(run((end) => (item(end, '1').text = 'Oat milk')))).holds).toBe(true);
    // Eggs (item 2) is done at the start: leaving it so is not the run's work.
    const eggsDone = fieldChanged(items, { pick: { text: 'Eggs' }, field: 'done', to: true });
    expect(await eggsDone.judge(run())).toEqual({ holds: false, detail: 'item 2: done was true at the start already: not the run\'s work' });
    // Undone is a change to a value too.
    const eggsUndone = fieldChanged(items, { pick: { text: 'Eggs' }, field: 'done', to: false, kinds: ['undone'] });
    expect(await judged([eggsUndone], run((end) => (item(end, '2').done = false)))).toMatchObject({ actual: true, sideEffects: [] });
  });

  test('the record is the one picked at the start, not one found again at the end', async () => {
    // Milk deleted, and a new "Milk" added done: another record, so the target did not change; both changes are side effects.
    const verdict = await judged(
      [milkDone],
      run((end) => {
        remove(end, '1');
        add(end, '1', '9', 'Milk', true);
      }),
    );
    expect(verdict.actual).toBe(false);
    expect(verdict.verdicts[0]!.detail).toBe('item 1 is gone');
    expect(verdict.sideEffects.map((change) => `${change.kind} ${change.id}`)).toEqual(['add 9', 'delete 1']);
  });

  test('a value from the evidence: the run\'s own user', async () => {
    type Owned = { id: string; owner: string };
    type State = { tickets: Owned[] };
    const tickets: Records<State, Owned> = { noun: 'ticket', read: (state) => state.tickets, id: (ticket) => ticket.id };
    const assigned = fieldChanged(tickets, { pick: { id: '7' }, field: 'owner', to: ({ user }) => user, description: 'ticket 7 is assigned to the run\'s user' });
    const start = { tickets: [{ id: '7', owner: '' }] };
    const evidence = (owner: string) => ({ start, end: { tickets: [{ id: '7', owner }] }, diff: [{ kind: 'assign', id: '7', detail: 'assign 7' }], user: 'ada' });
    expect(await assigned.judge(evidence('ada'))).toEqual({ holds: true, detail: 'ticket 7: owner changed from "" to "ada"' });
    expect((await assigned.judge(evidence('bob'))).holds).toBe(false);
    expect(assigned.description).toBe('ticket 7 is assigned to the run\'s user');
  });
});

test.describe('a record added or removed', () => {
  const coffeeAdded = recordAdded(items, { matching: { list: '1', text: 'Buy coffee' }, kinds: ['add'] });

  test('added: holds on a new record that matches; a second copy is a side effect', async () => {
    expect(coffeeAdded.description).toBe('an item {"list":"1","text":"Buy coffee"} is added');
    const once = await judged([coffeeAdded], run((end) => add(end, '1', '7', 'Buy coffee')));
    expect(once).toEqual({ actual: true, verdicts: [{ description: coffeeAdded.description, holds: true, detail: 'item 7 is added' }], sideEffects: [] });
    const twice = await judged(
      [coffeeAdded],
      run((end) => {
        add(end, '1', '7', 'Buy coffee');
        add(end, '1', '8', 'Buy coffee');
      }),
    );
    expect([twice.actual, twice.sideEffects.map((change) => change.id)]).toEqual([true, ['8']]);
  });

  test('added elsewhere, or a record that was there at the start: it does not hold', async () => {
    const elsewhere = await judged([coffeeAdded], run((end) => add(end, '2', '7', 'Buy coffee')));
    expect([elsewhere.actual, elsewhere.verdicts[0]!.detail, elsewhere.sideEffects.map((change) => change.id)]).toEqual([false, 'no item {"list":"1","text":"Buy coffee"} was added (1 other was)', ['7']]);
    const milk = recordAdded(items, { matching: (row) => row.text === 'Milk', what: 'a Milk item' });
    expect(milk.description).toBe('a Milk item is added');
    expect(await milk.judge(run())).toEqual({ holds: false, detail: 'no item matching was added' });
  });

  test('removed: holds when the record picked at the start is gone at the end', async () => {
    const breadGone = recordRemoved(items, { pick: (start) => items.read(start).find((row) => row.text === 'Bread') ?? notFound('no Bread at the start'), kinds: ['delete'] });
    expect(breadGone.description).toBe('the item picked at the start is removed');
    expect(await judged([breadGone], run((end) => remove(end, '3')))).toMatchObject({ actual: true, sideEffects: [] });
    expect(await breadGone.judge(run())).toEqual({ holds: false, detail: 'item 3 is still there' });
    // Marking it done is not removing it: not actual, and a side effect (only a delete is expected).
    const done = await judged([breadGone], run((end) => (item(end, '3').done = true)));
    expect([done.actual, done.sideEffects.map((change) => change.kind)]).toEqual([false, ['done']]);
  });
});

test.describe('nothing else touched', () => {
  test('an unrelated record touched is a side effect, and fails nothing else touched', async () => {
    const touched = run((end) => {
      item(end, '1').done = true;
      item(end, '3').done = true;
    });
    const alone = await judged([milkDone], touched);
    expect([alone.actual, alone.sideEffects.map((change) => change.id)]).toEqual([true, ['3']]);
    const only = await judged([milkDone, nothingElseTouched([milkDone])], touched);
    expect(only.actual).toBe(false);
    expect(only.verdicts[1]).toEqual({ description: 'nothing else is changed', holds: false, detail: '1 other change: done item 3 ("Bread") in list 1' });
    const clean = await judged([milkDone, nothingElseTouched([milkDone])], run((end) => (item(end, '1').done = true)));
    expect(clean.actual).toBe(true);
    expect(clean.verdicts[1]!.detail).toBe('no other change');
  });
});

test.describe('a pick that finds nothing', () => {
  const cheese = fieldChanged(items, { pick: { text: 'Cheese' }, field: 'done', to: true });

  test('unresolved, it cannot hold, saying why', async () => {
    expect(await cheese.judge(run())).toEqual({ holds: false, detail: 'no item {"text":"Cheese"} at the start' });
  });

  test('resolved on a task that does not say it is infeasible, it is bad input: one line naming it', () => {
    expect(() => cheese.resolve!(fresh())).toThrow('the item picked at the start: done changed to true: no item {"text":"Cheese"} at the start');
    try {
      cheese.resolve!(fresh());
    } catch (error) {
      expect((error as Error).name).toBe('InputError');
      expect((error as Error).stack).not.toContain('\n');
    }
  });

  test('on an infeasible task, it is judged as not there: never holds, and every change is a side effect', async () => {
    const task = defineTask({ name: 'mark-cheese-done', infeasible: 'there is no Cheese item', prompt: 'Mark Cheese done.', postconditions: [cheese] });
    const evidence = run((end) => (item(end, '1').done = true));
    const verdict = await judged(task.postconditions as Todo[], evidence);
    expect(verdict).toEqual({
      actual: false,
      verdicts: [{ description: cheese.description, holds: false, detail: 'no item {"text":"Cheese"} at the start' }],
      sideEffects: [{ kind: 'done', id: '1', detail: 'done item 1 ("Milk") in list 1' }],
    });
    const bound = task.postconditions[0]!.resolve!(evidence.start, { infeasible: 'there is no Cheese item' });
    expect(await bound.check!({ load: async () => ({ status: 200, html: '' }) })).toEqual({ holds: false, detail: 'no item {"text":"Cheese"} at the start' });
  });

  test('a function pick says so with notFound()', async () => {
    const gone = recordRemoved(items, { what: 'the Cheese item', pick: () => notFound('no Cheese on any list') });
    expect(await gone.judge(run())).toEqual({ holds: false, detail: 'no Cheese on any list' });
    expect(() => gone.resolve!(fresh())).toThrow('the Cheese item is removed: no Cheese on any list');
  });

  test('boundAtStart, from the main entry, takes the same answer for a postcondition of one\'s own', async () => {
    const own = boundAtStart<TodoSnapshot, TodoChange, TodoItem>('the Cheese item is done', () => notFoundOfMain('no Cheese at the start'), () => milkDone);
    expect(await own.judge(run())).toEqual({ holds: false, detail: 'no Cheese at the start' });
    expect(own.expects({ kind: 'done', id: '1', list: '1', text: 'Milk', detail: '' }, run())).toBe(false);
    expect(() => own.resolve!(fresh())).toThrow('the Cheese item is done: no Cheese at the start');
    expect((await own.resolve!(fresh(), { infeasible: 'no Cheese' }).judge(run())).holds).toBe(false);
  });
});
