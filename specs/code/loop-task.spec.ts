import { expect, hn, test } from 'harness-eval';

// The loop task: upvote every front-page story with "for" in its title (five of thirty). A
// tool-calling model spends a turn per story; in code mode the model writes one program that
// loops. The stacks differ only in code mode.
const task = hn.tasks.upvoteAllMatching('for');
// The browser starts logged in, as with a saved session: this spec measures looping, not the login wall.
test.use({ site: hn.recorded({ startLoggedIn: true }) });
/** A tool loop needs at least: open the page, list the stories, one click per story. */
const LOOP_TURNS = 2 + 5;

test.describe('tool loop', () => {
  test.use({ model: 'scripted:iterator', layers: [] });
  test('upvotes every matching story, one model turn per story', async ({ harness }) => {
    const run = await harness.run(task);
    expect(run).toSucceed();
    expect(run).toHaveNoFalseSuccess();
    expect(run.iterations).toBeGreaterThanOrEqual(LOOP_TURNS);
  });
});

test.describe('code mode', () => {
  test.use({ model: 'scripted:programmer', layers: ['code-mode'] });
  test('upvotes every matching story with one program, in far fewer model turns', async ({ harness }) => {
    const run = await harness.run(task);
    expect(run).toSucceed();
    expect(run).toHaveNoFalseSuccess();
    expect(run).toFinishWithin({ iterations: Math.floor(LOOP_TURNS / 5) });
  });
});
