import type { Page } from '@playwright/test';
import { markupYears } from '../src/sites/hn/index.ts';
import { hnTools } from '../src/sites/hn/tools.ts';
import { browserTools, TEXT_LIMIT, type ToolState } from '../src/tools/browser.ts';
import { readFirstElement } from '../src/tools/first-element.ts';
import { ToolRegistry } from '../src/tools/registry.ts';
import { expect, test } from './support.ts';

const HN = 'https://news.ycombinator.com';

function tools(page: Page) {
  const state: ToolState = {};
  const registry = new ToolRegistry(browserTools(page, state, { siteTools: hnTools(page) }));
  let n = 0;
  const call = async (name: string, args: object = {}) => registry.call({ id: `c${++n}`, name, arguments: JSON.stringify(args) });
  return { registry, state, call };
}

for (const markupYear of markupYears) {
  test.describe(`${markupYear} markup`, () => {
    test.use({ replicaOptions: { faults: { markupYear } } });
    test('get_stories reads rank, id, title, url, points and voted', async ({ page, replica }) => {
      const { call } = tools(page);
      await call('navigate', { url: `${HN}/news` });
      const result = await call('get_stories');
      if (!result.ok) throw new Error(result.error);
      const stories = result.output.stories as Array<Record<string, unknown>>;
      expect(stories).toHaveLength(30);
      const first = [...replica.capture.items.values()].find((item) => item.rank === 1)!;
      expect(stories[0]).toEqual({ rank: 1, id: first.id, title: first.title, url: expect.any(String), points: first.points, voted: false, votable: true });
      expect(stories.filter((story) => !story.votable)).toHaveLength(1);
    });
  });
}

test('get_stories sees a vote; has_class reads classes', async ({ page, replica }) => {
  const { call } = tools(page);
  const first = [...replica.capture.items.values()].find((item) => item.rank === 1)!;
  await call('navigate', { url: `${HN}/login?goto=news` });
  await call('fill', { selector: 'input[name="acct"]', value: replica.options.account.username });
  await call('fill', { selector: 'input[name="pw"]', value: replica.options.account.password });
  expect(await call('click', { selector: 'input[value="login"]' })).toMatchObject({ ok: true, output: { url: `${HN}/news` } });
  expect(await call('has_class', { selector: `#up_${first.id}`, className: 'nosee' })).toMatchObject({ ok: true, output: { present: false, classes: 'clicky' } });
  expect(await call('click', { selector: `#up_${first.id}` })).toMatchObject({ ok: true, output: { clicked: expect.stringContaining(`a#up_${first.id} href=vote?id=${first.id}`) } });
  await expect.poll(() => replica.truth().votes).toEqual({ harness: [first.id] });
  const result = await call('get_stories');
  expect(result.ok && (result.output.stories as Array<{ voted: boolean }>)[0]!.voted).toBe(true);
  expect(await call('has_class', { selector: `#up_${first.id}`, className: 'nosee' })).toMatchObject({ ok: true, output: { present: true } });
  expect(await call('click', { selector: `#up_${first.id}` })).toMatchObject({ ok: false, kind: 'tool_error', error: `#up_${first.id} is not visible` });
});

test('readFirstElement reads the element the locator finds first, for any selector, shadow roots or not', async ({ page }) => {
  const light = '<div class="a"><p class="x" id="p1">one</p><p class="x" id="p2">two</p></div><span><b class="x" id="b1">bold</b></span>';
  // A shadow root first: Playwright's CSS pierces it (a selector list's first match is then in it), the browser's querySelector does not.
  const shadowFirst = `<div class="a" id="host"></div>${light}<script>document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<span><p class="x" id="shadowed">in the shadow</p></span>';</script>`;
  const selectors = ['.x', '.a > .x + p', 'span .x, .x', 'p:has-text("two")', 'text=two', '//p[@id="p2"]', '.x >> nth=1', '#none', 'div#host p'];
  for (const html of [light, shadowFirst]) {
    await page.setContent(html);
    for (const selector of selectors) {
      const locator = page.locator(selector).first();
      const expected = (await locator.count()) === 0 ? undefined : await locator.evaluate((element) => element.id);
      expect(await readFirstElement(page, selector, (element) => element.id), `${selector} on ${html === light ? 'a page' : 'a page with a shadow root first'}`).toBe(expected);
    }
    await expect(readFirstElement(page, 'p[', (element) => element.id)).rejects.toThrow();
  }
  // Where the browser's own query would have found another element.
  expect(await readFirstElement(page, 'span .x, .x', (element) => element.id)).toBe('shadowed');
  expect(await page.evaluate(() => document.querySelector('span .x, .x')?.id)).toBe('p1');
});

test('get_text truncates with a notice; navigate takes only http(s); finish records the claim', async ({ page, replica }) => {
  const { call, state, registry } = tools(page);
  expect(replica.capture.items.size).toBeGreaterThan(0);
  await call('navigate', { url: `${HN}/news` });
  const text = await call('get_text');
  if (!text.ok) throw new Error(text.error);
  expect((text.output.text as string).length).toBe(TEXT_LIMIT);
  expect(text.output.truncated).toMatch(new RegExp(`^showing ${TEXT_LIMIT} of \\d+ characters$`));
  expect(await call('navigate', { url: 'file:///etc/passwd' })).toEqual({ ok: false, kind: 'tool_error', error: "file:///etc/passwd refused: file: URLs are refused: the browser opens the site's http(s) pages only" });
  expect(await call('navigate', { url: 'http://127.0.0.1:9/' })).toMatchObject({ ok: false, kind: 'tool_error', error: 'http://127.0.0.1:9/ refused: 127.0.0.1 is a loopback address: the browser never reaches one' });
  expect(await call('current_url')).toEqual({ ok: true, output: { url: `${HN}/news` } });
  expect(state.claim).toBeUndefined();
  await call('finish', { success: true, summary: 'done' });
  expect(state.claim).toEqual({ success: true, summary: 'done' });
  const schemas = registry.schemas();
  // The site's own tools come after the browser's, before finish.
  expect(schemas.map((schema) => schema.name)).toEqual(['navigate', 'current_url', 'get_text', 'fill', 'click', 'has_class', 'get_stories', 'finish']);
  expect(schemas.find((schema) => schema.name === 'click')!.parameters).toMatchObject({ type: 'object', required: ['selector'] });
});

test('the browser tools alone name nothing of a site; each says where it puts page text', async ({ page }) => {
  const names = browserTools(page, {}).map((tool) => tool.name);
  expect(names).toEqual(['navigate', 'current_url', 'get_text', 'fill', 'click', 'has_class', 'finish']);
  const pageText = Object.fromEntries([...browserTools(page, {}), ...hnTools(page)].filter((tool) => tool.pageText).map((tool) => [tool.name, String(tool.pageText)]));
  expect(pageText).toEqual({ navigate: '/^title$/', get_text: '/^text$/', click: '/^title$/', get_stories: '/^stories\\.\\d+\\.title$/' });
});

test.describe("click waits for what a button's script sends (fetch(), then a reload or the page rewritten), whatever way the script is attached", () => {
  const APP = 'https://app.example';
  for (const [then, after] of [
    ['location.reload()', 'a reload'],
    ["location.href = '/?again'", 'another page loaded'],
    ["document.querySelector('form').submit()", 'a form submitted'],
    ["document.querySelector('#n').textContent = String(Number(document.querySelector('#n').textContent) + 1)", 'the page rewritten in place'],
  ] as const) {
    test(after, async ({ page }) => {
      let count = 0;
      await page.route(`${APP}/**`, async (route) => {
        if (route.request().method() === 'POST') {
          // Slow enough that a read right after the click would see the page before the script's work.
          await new Promise((resolve) => setTimeout(resolve, 300));
          count += 1;
          return route.fulfill({ status: 200, body: '{}' });
        }
        await route.fulfill({
          contentType: 'text/html',
          body: `<title>Count</title><p id="n">${count}</p><button id="add">Add</button><form action="/"></form><script>document.querySelector('#add').addEventListener('click', async () => { await fetch('/add', { method: 'POST' }); ${then}; });</script>`,
        });
      });
      const { call } = tools(page);
      await call('navigate', { url: `${APP}/` });
      expect(await call('click', { selector: '#add' })).toMatchObject({ ok: true, output: { title: 'Count' } });
      expect(await call('get_text')).toMatchObject({ ok: true, output: { text: expect.stringMatching(/^1\b/) } });
      expect(count).toBe(1);
    });
  }
});
