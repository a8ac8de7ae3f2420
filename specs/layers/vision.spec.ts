import { expect, hn, test } from 'harness-eval';

// The same looking model, logged in, with and without vision: with it, it screenshots and views
// the page before it votes, and the summary shows what the screenshot cost against the text tools.
test.use({ model: 'scripted:looker', site: hn.recorded({ startLoggedIn: true }) });

test.describe('with vision and markdown text', () => {
  test.use({ layers: [['vision', { text: 'markdown' }]], layerStack: 'vision-markdown' });
  test('the model sees a screenshot, then votes', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.filter((event) => event.type === 'harness_image')).toHaveLength(1);
    expect(run).toSucceed();
  });
});

test.describe('without vision', () => {
  test.use({ layers: [], layerStack: 'no-vision' });
  test('the model reads the page as text alone, then votes', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.some((event) => event.type === 'tool_call' && event.name === 'screenshot')).toBe(false);
    expect(run).toSucceed();
  });
});
