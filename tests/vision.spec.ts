import type { Page } from '@playwright/test';
import { evaluate } from '../src/eval/evaluate.ts';
import { createModel } from '../src/models/registry.ts';
import { RunContext } from '../src/harness/context.ts';
import { vision } from '../src/layers/vision.ts';
import { FIXED_IMAGE_TOKENS, imageTokens, openAIImageTokens } from '../src/models/images.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { pageMarkdown } from '../src/tools/markdown.ts';
import { ToolRegistry } from '../src/tools/registry.ts';
import { ScreenshotStore, screenshotTools, type Screenshot } from '../src/tools/screenshot.ts';
import { renderMarkdown } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import { expect, attachedRunRecord, test, turnsDouble } from './support.ts';

const HN = 'https://news.ycombinator.com';

/** A JPEG's markers read by hand, as a decoder would: the test's own reading, not the tool's. */
function jpegFrame(jpeg: Buffer) {
  expect([...jpeg.subarray(0, 2)]).toEqual([0xff, 0xd8]);
  let at = 2;
  let firstQuantizer: number | undefined;
  for (;;) {
    const [ff, marker] = [jpeg[at]!, jpeg[at + 1]!];
    expect(ff).toBe(0xff);
    const length = (jpeg[at + 2]! << 8) | jpeg[at + 3]!;
    // DQT: the luminance table's first entry, 8-bit precision (the table's first byte is 0).
    if (marker === 0xdb && firstQuantizer === undefined) firstQuantizer = jpeg[at + 5];
    if (marker === 0xc0 || marker === 0xc2) return { height: (jpeg[at + 5]! << 8) | jpeg[at + 6]!, width: (jpeg[at + 7]! << 8) | jpeg[at + 8]!, firstQuantizer };
    at += 2 + length;
  }
}

function shooter(page: Page, keep = 5) {
  const store = new ScreenshotStore(keep);
  const shown: Screenshot[] = [];
  const registry = new ToolRegistry(screenshotTools(() => page, store, (shot) => (shown.push(shot), { ref: shot.ref })));
  let n = 0;
  const call = (name: string, args: object = {}) => registry.call({ id: `c${++n}`, name, arguments: JSON.stringify(args) });
  return { call, shown, store };
}

test.describe('screenshot', () => {
  // The context's own viewport differs: the screenshot's must not.
  test.use({ viewport: { width: 800, height: 600 } });

  test('is a 1280×720 JPEG at quality 60, and the page keeps its own viewport', async ({ page, replica }) => {
    expect(replica.capture.items.size).toBeGreaterThan(0);
    await page.goto(`${HN}/news`);
    const { call, shown } = shooter(page);
    expect(await call('screenshot')).toEqual({ ok: true, output: { ref: 'shot_1', width: 1280, height: 720, bytes: expect.any(Number) } });
    await call('view_screenshot', { ref: 'shot_1' });
    const frame = jpegFrame(shown[0]!.jpeg);
    expect(frame).toMatchObject({ width: 1280, height: 720 });
    // libjpeg's quality 60 scales the standard luminance table by 80%: its first entry 16 becomes 13.
    expect(frame.firstQuantizer).toBe(13);
    expect(page.viewportSize()).toEqual({ width: 800, height: 600 });
  });

  test('a selector crops to that element', async ({ page, replica }) => {
    expect(replica.capture.items.size).toBeGreaterThan(0);
    await page.goto(`${HN}/news`);
    const { call, shown } = shooter(page);
    const result = await call('screenshot', { selector: 'tr.athing' });
    await call('view_screenshot', { ref: 'shot_1' });
    await page.setViewportSize({ width: 1280, height: 720 });
    const box = (await page.locator('tr.athing').first().boundingBox())!;
    const frame = jpegFrame(shown[0]!.jpeg);
    expect(Math.abs(frame.width - box.width)).toBeLessThanOrEqual(1);
    expect(Math.abs(frame.height - box.height)).toBeLessThanOrEqual(1);
    expect(frame.height).toBeLessThan(100);
    expect(result).toMatchObject({ ok: true, output: { width: frame.width, height: frame.height } });
    expect(await call('screenshot', { selector: '#no-such-thing' })).toMatchObject({ ok: false, kind: 'tool_error', error: 'no element matches #no-such-thing' });
  });

  test('keeps the last `keep` screenshots: an older ref answers a clear error', async ({ page }) => {
    await page.setContent('<p>hello</p>');
    const { call } = shooter(page, 2);
    for (let i = 0; i < 3; i++) await call('screenshot');
    expect(await call('view_screenshot', { ref: 'shot_1' })).toEqual({
      ok: false,
      kind: 'tool_error',
      error: 'shot_1 is no longer kept: the harness keeps the last 2 screenshots (kept: shot_2, shot_3); take a new one',
    });
    expect(await call('view_screenshot', { ref: 'shot_9' })).toMatchObject({ ok: false, error: 'no screenshot shot_9 (kept: shot_2, shot_3)' });
    expect(await call('view_screenshot', { ref: 'shot_3' })).toMatchObject({ ok: true, output: { ref: 'shot_3' } });
  });
});

test.describe('vision in a run', () => {
  const turns = [
    [{ name: 'navigate', arguments: JSON.stringify({ url: `${HN}/news` }) }],
    [{ name: 'screenshot', arguments: '{}' }],
    [{ name: 'current_url', arguments: '{}' }],
    [{ name: 'view_screenshot', arguments: '{"ref":"shot_1"}' }],
    [{ name: 'finish', arguments: '{"success":false,"summary":"looked"}' }],
  ];

  test('pixels reach the model only after view_screenshot, as the next user message; never the trace', async ({ context }) => {
    const { model, requests } = turnsDouble(turns);
    const record = await evaluate({ context, site: recordedHn(), model, layers: [vision({ images: 'send' })], task: upvoteFirstPost });
    const withImages = requests.map((request) => request.messages.filter((message) => message.role === 'user' && message.images?.length));
    // Requests 1–4 (before and after the screenshot, before the view) carry no image; the 5th does, last.
    expect(withImages.map((messages) => messages.length)).toEqual([0, 0, 0, 0, 1]);
    const last = requests[4]!.messages.at(-1)!;
    expect(last).toMatchObject({ role: 'user', content: expect.stringMatching(/^\[harness\] \[image shot_1, 1280×720, \d+ KB\]$/) });
    const data = last.role === 'user' ? last.images![0]!.data : '';
    expect(Buffer.from(data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    const traced = JSON.stringify(record);
    expect(traced).not.toContain(data.slice(0, 64));
    expect(traced).not.toContain('/9j/');
    const tokens = imageTokens(model.id, 1280, 720, 'high');
    expect(record.trace.find((event) => event.type === 'harness_image')).toMatchObject({ ref: 'shot_1', width: 1280, height: 720, tokens });
    expect(record.trace.find((event) => event.type === 'tool_result' && event.name === 'view_screenshot')).toMatchObject({ ok: true, output: { ref: 'shot_1', tokens } });
  });

  test('a model that takes no images gets a note instead', async ({ context }) => {
    const { model, requests } = turnsDouble(turns);
    await evaluate({ context, site: recordedHn(), model, layers: [vision()], task: upvoteFirstPost });
    expect(requests.flatMap((request) => request.messages).some((message) => message.role === 'user' && message.images !== undefined)).toBe(false);
    expect(requests[4]!.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('test:turns-double does not take images') });
  });

  test('the looker double screenshots and views the page before it votes, and succeeds', async ({ context }) => {
    const record = await evaluate({ context, site: recordedHn({ startLoggedIn: true }), model: 'scripted:looker', layers: [vision({ text: 'markdown' })], task: upvoteFirstPost });
    const calls = record.trace.flatMap((event) => (event.type === 'tool_call' ? [event.name] : []));
    expect(calls.slice(0, 4)).toEqual(['navigate', 'screenshot', 'view_screenshot', 'get_stories']);
    expect(calls).toContain('click');
    expect(record.trace.filter((event) => event.type === 'harness_image')).toHaveLength(1);
    expect(record).toMatchObject({ actual: true, claimed: true });
  });
});

test('markdown leaves out navigation, scripts, hidden parts and form controls, and keeps lists, tables and links', async ({ page }) => {
  await page.goto('about:blank');
  await page.setContent(`
    <header><a href="/home">Home</a> | Site header</header>
    <nav><a href="/menu">Menu</a></nav>
    <div role="navigation">Breadcrumbs</div>
    <script>var secret = 1;</script><style>p { color: red }</style>
    <h2>Stories</h2>
    <ul><li>First <a href="https://example.com/one">item one</a></li><li>Second</li></ul>
    <ol><li>alpha</li><li>beta</li></ol>
    <table><tr><th>Name</th><th>Points</th></tr><tr><td>Rust</td><td>42</td></tr></table>
    <table><tr><td>layout</td><td>cell</td></tr></table>
    <div style="display:none">Invisible text</div><p hidden>Hidden text</p>
    <form><label>Name</label><input value="typed"><textarea>draft</textarea><button>Send it</button></form>
    <a href="/vote?id=1"><div title="upvote"></div></a> <a href="javascript:void(0)">toggle</a>
    <footer>Footer text</footer>`);
  const markdown = await pageMarkdown(page);
  for (const gone of ['Home', 'Menu', 'Breadcrumbs', 'secret', 'color', 'Invisible', 'Hidden text', 'typed', 'draft', 'Send it', 'Footer']) expect(markdown).not.toContain(gone);
  expect(markdown).toContain('## Stories');
  expect(markdown).toContain('- First [item one](https://example.com/one)\n- Second');
  expect(markdown).toContain('1. alpha\n2. beta');
  expect(markdown).toContain('| Name | Points |\n| --- | --- |\n| Rust | 42 |');
  expect(markdown).toMatch(/^layout cell$/m);
  expect(markdown).toContain('[upvote](/vote?id=1)');
  expect(markdown).toContain('toggle');
  expect(markdown).not.toContain('javascript:');
});

test('markdown get_text of an HN page: its story link kept, no form, no script links', async ({ page, replica }) => {
  const story = [...replica.capture.items.values()].find((item) => item.rank === 1)!;
  await page.goto(`${HN}/item?id=${story.id}`);
  const markdown = await pageMarkdown(page);
  expect(markdown).toContain(`[${story.title}](`);
  expect(markdown).not.toContain('javascript:');
  // The comment form's textarea and button are chrome.
  expect(markdown).not.toMatch(/\badd comment\b/);
});

test("output after vision({ text: 'markdown' }) pages the markdown get_text, not a plain one of its own", async ({ context }) => {
  const { model } = turnsDouble([
    [{ name: 'navigate', arguments: JSON.stringify({ url: `${HN}/news` }) }],
    [{ name: 'get_text', arguments: '{}' }],
  ]);
  const run = await evaluate({ context, site: recordedHn(), model, layers: [vision({ text: 'markdown' }), 'output'], task: upvoteFirstPost });
  const text = run.trace.find((event) => event.type === 'tool_result' && event.name === 'get_text');
  // Paged by output (the front page's markdown is over its inline size), and markdown: links as [text](url).
  expect(text?.type === 'tool_result' && JSON.stringify(text.output)).toMatch(/\]\(https:\/\//);
  expect(run.trace.some((event) => event.type === 'harness_output' && event.tier !== 'inline')).toBe(true);
});

test("the doubles count an image they are sent as the fixed estimate, not as its base64's length", async () => {
  const model = createModel('scripted:looker');
  const ask = { role: 'user' as const, content: 'look' };
  const image = { mimeType: 'image/jpeg' as const, data: Buffer.alloc(60_000, 7).toString('base64') };
  const tools = [{ name: 'finish', description: 'End the task.', parameters: { type: 'object', properties: { success: { type: 'boolean' }, summary: { type: 'string' } } } }];
  const plain = await model.chat({ messages: [ask], tools });
  const seen = await model.chat({ messages: [{ ...ask, images: [image] }], tools });
  // The same text, as parts beside the image: a few tokens more than the estimate, never the 20,000 of its base64.
  expect(seen.usage.input! - plain.usage.input!).toBeGreaterThanOrEqual(FIXED_IMAGE_TOKENS);
  expect(seen.usage.input! - plain.usage.input!).toBeLessThan(FIXED_IMAGE_TOKENS + 20);
});

test('image tokens: OpenAI tile formula (high and low), a fixed estimate elsewhere', () => {
  expect(openAIImageTokens(1280, 720, 'high')).toBe(85 + 170 * 6);
  expect(openAIImageTokens(1280, 720, 'low')).toBe(85);
  // OpenAI's own examples: 1024² is 4 tiles after the 768-px shrink; 2048×4096 is 6.
  expect(openAIImageTokens(1024, 1024, 'high')).toBe(765);
  expect(openAIImageTokens(2048, 4096, 'high')).toBe(1105);
  expect(openAIImageTokens(400, 200, 'high')).toBe(255);
  expect(imageTokens('ollama:llava', 1280, 720, 'high')).toBe(FIXED_IMAGE_TOKENS);
  expect(imageTokens('openai:gpt-4o', 1280, 720, 'high')).toBe(1105);
});

test('the report sums screenshot and text-tool tokens per cell, and shows them beside the cell without screenshots', () => {
  const seeing = { layers: 'vision', condition: { model: 'scripted:looker', layers: [{ vision: {} }], site: {} } };
  const runs = [
    attachedRunRecord({ ...seeing, test: { id: 'a' }, observationTokens: { screenshots: 576, text: 900 } }),
    attachedRunRecord({ ...seeing, test: { id: 'b' }, observationTokens: { screenshots: 576, text: 700 } }),
    attachedRunRecord({ layers: 'bare', test: { id: 'c' }, observationTokens: { screenshots: 0, text: 1200 } }),
    attachedRunRecord({ layers: 'old', test: { id: 'd' } }),
  ];
  const summary = summarize(runs, { complete: true });
  const byLayers = new Map(summary.cells.map((cell) => [cell.layers, cell]));
  expect(byLayers.get('vision')!.observationTokens).toEqual({ screenshots: 1152, text: 1600, runs: 2 });
  expect(byLayers.get('bare')!.observationTokens).toEqual({ screenshots: 0, text: 1200, runs: 1 });
  expect(byLayers.get('old')!.observationTokens).toBeUndefined();
  const markdown = renderMarkdown(summary);
  expect(markdown).toContain('## What the model was shown');
  expect(markdown).toMatch(/\| vision \| [^|]+ \| 576 \| 800 \|/);
  expect(markdown).toMatch(/\| bare \| [^|]+ \| 0 \| 1,200 \|/);
  expect(renderMarkdown(summarize([runs[2]!], { complete: true }))).not.toContain('What the model was shown');
});

test('a saved run (durable) keeps an image message by its text, without the pixels', () => {
  const { model } = turnsDouble([]);
  const run = new RunContext('task', model, 'system', undefined, []);
  const data = Buffer.from('pixels that must not be saved').toString('base64');
  run.push({ role: 'user', content: '[harness] [image shot_1, 1280×720, 41 KB]', images: [{ mimeType: 'image/jpeg', data }] });
  expect(run.snapshot().messages).toEqual([{ role: 'user', content: '[harness] [image shot_1, 1280×720, 41 KB]' }]);
  expect(run.messages[0]).toMatchObject({ images: [{ data }] });
});
