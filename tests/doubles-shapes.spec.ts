import * as cheerio from 'cheerio';
import type { AnyNode } from 'domhandler';
import { functionAgent } from '../src/agents/function.ts';
import type { AgentInput } from '../src/core/agent.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { favoriteFirstStory } from '../src/sites/hn/tasks/marks.ts';
import { outcomeOf } from '../src/report/format.ts';
import { expect, test } from './support.ts';

/**
 * The doubles drive an agent whatever the shape of its tools (issue 33, item 8): a page as HTML,
 * markdown or text and links; opened by `url` or by `path`; on the site's own origin or on the
 * replica's loopback URL. The agent here is one harness-eval did not write: a plain loop over the
 * site's HTTP with a cookie jar, that signs in itself when a page asks (as examples/python-agent).
 */

/** How the agent's tool answers a page; `status`: only where it landed, nothing a model could read. */
type View = 'html' | 'markdown' | 'text-and-links' | 'status';
interface Shape {
  view: View;
  address: 'url' | 'path';
  /** Where the agent says the site is, and what its tool opens: the site's own origin, or the replica's loopback URL. */
  origin: 'site' | 'loopback';
  /** A tool that clicks a link by a CSS selector (it opens the link's address). */
  click?: boolean;
}

/** A page as markdown, as a converter writes it: links as `[text](href)`, rows and blocks as lines, form fields dropped. */
function markdownOf(html: string): string {
  const $ = cheerio.load(html);
  $('head, script, style').remove();
  const walk = (node: AnyNode): string => {
    if (node.type === 'text') return node.data.replace(/\s+/g, ' ');
    if (node.type !== 'tag') return '';
    const inner = $(node).contents().toArray().map(walk).join('');
    if (node.name === 'a') return `[${inner.trim()}](${$(node).attr('href') ?? ''})`;
    if (node.name === 'br') return '\n';
    if (['tr', 'p', 'div', 'table', 'center', 'form'].includes(node.name)) return `\n${inner}\n`;
    if (['input', 'textarea', 'select'].includes(node.name)) return '';
    return node.name === 'td' ? `${inner} ` : inner;
  };
  return walk($('body')[0]!).replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** A page as its visible text and its links (text and address only: no ids, no classes). */
function textAndLinksOf(html: string) {
  const $ = cheerio.load(html);
  $('head, script, style').remove();
  const links = $('a[href]')
    .toArray()
    .map((link) => ({ text: $(link).text().trim(), href: $(link).attr('href')! }));
  return { title: cheerio.load(html)('title').text(), text: $('body').text().replace(/\s+/g, ' ').trim(), links };
}

/** The site over HTTP with a cookie jar, redirects followed by hand so the session cookie of a login is kept. */
function httpClient(base: string) {
  let cookie = '';
  return async (path: string, form?: Record<string, string>) => {
    let url = new URL(path, base).href;
    let body: URLSearchParams | undefined = form && new URLSearchParams(form);
    for (let hop = 0; hop < 5; hop += 1) {
      const response = await fetch(url, { method: body ? 'POST' : 'GET', body, redirect: 'manual', headers: { ...(cookie && { cookie }), ...(body && { 'content-type': 'application/x-www-form-urlencoded' }) } });
      const set = response.headers.get('set-cookie');
      if (set) cookie = set.split(';')[0]!;
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        url = new URL(location, url).href;
        body = undefined;
        continue;
      }
      return { url: new URL(url), status: response.status, html: await response.text() };
    }
    throw new Error(`${path}: too many redirects`);
  };
}

/** A foreign agent whose tools have `shape`: one to open a page, one to end the task. */
function shapedAgent(shape: Shape) {
  return functionAgent(
    async ({ task, site, model, signal }: AgentInput) => {
      const told = shape.origin === 'site' ? site.origin : new URL(site.url).origin;
      const get = httpClient(site.url);
      const tools = [
        {
          type: 'function',
          function: {
            name: 'open_page',
            description: `Open a page of the site${shape.address === 'path' ? ' by its path, such as /news' : ''}; it answers the page as ${shape.view.replace(/-/g, ' ')}.`,
            parameters: { type: 'object', properties: { [shape.address]: { type: 'string' } }, required: [shape.address] },
          },
        },
        { type: 'function', function: { name: 'end_task', description: 'End the task.', parameters: { type: 'object', properties: { success: { type: 'boolean' }, summary: { type: 'string' } } } } },
        ...(shape.click ? [{ type: 'function', function: { name: 'click_link', description: 'Click a link on the page.', parameters: { type: 'object', properties: { selector: { type: 'string' } } } } }] : []),
      ];
      let last = { address: '', html: '' };
      const messages: unknown[] = [
        { role: 'system', content: `You browse Hacker News, at ${told}. Open its pages with open_page, and end with end_task.` },
        { role: 'user', content: task },
      ];
      /** The page asked for, as this agent's view shows it; a login page is answered by signing in, said in a note. */
      const open = async (address: string): Promise<{ content: string; note?: string }> => {
        if (shape.address === 'url' && !address.startsWith(`${told}/`)) return { content: JSON.stringify({ error: `open_page opens pages of ${told} only` }) };
        const target = new URL(address, told);
        let page = await get(`${target.pathname}${target.search}`);
        let note: string | undefined;
        if (/<input[^>]*type="?password/i.test(page.html) && site.account) {
          page = await get('/login', { acct: site.account.username, pw: site.account.password, goto: 'news' });
          note = `The page asked for a login, so the agent signed in as ${site.account.username} and opened the front page.`;
        }
        const shown = shape.address === 'path' ? `${page.url.pathname}${page.url.search}` : `${told}${page.url.pathname}${page.url.search}`;
        last = { address: shown, html: page.html };
        if (shape.view === 'markdown') return { content: markdownOf(page.html), note };
        const view = shape.view === 'html' ? { html: page.html } : shape.view === 'text-and-links' ? textAndLinksOf(page.html) : {};
        return { content: JSON.stringify({ url: shown, status: page.status, ...view, ...(note && { note }) }) };
      };
      for (let step = 0; step < 16; step += 1) {
        const response = await fetch(`${model.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${model.apiKey}` },
          body: JSON.stringify({ model: 'any', messages, tools }),
          signal,
        });
        const reply = (await response.json()) as { choices: Array<{ message: { tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> } }> };
        const message = reply.choices[0]!.message;
        messages.push(message);
        for (const call of message.tool_calls ?? []) {
          const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
          if (call.function.name === 'end_task') return { success: args.success === true, summary: String(args.summary ?? '') };
          const link = call.function.name === 'click_link' ? cheerio.load(last.html)(String(args.selector)).filter('a[href]').first().attr('href') : undefined;
          if (call.function.name === 'click_link' && link === undefined) {
            messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ error: `no link matches ${String(args.selector)}` }) });
            continue;
          }
          const address = link === undefined ? String(args[shape.address] ?? '') : shape.address === 'path' ? `/${link.replace(/^\//, '')}` : new URL(link, `${told}/`).href;
          const { content, note } = await open(address);
          messages.push({ role: 'tool', tool_call_id: call.id, content });
          // A text view has no field for a note: the agent's harness says it in a message of its own.
          if (note && shape.view === 'markdown') messages.push({ role: 'user', content: note });
        }
      }
      return { success: false, summary: 'the step cap was reached' };
    },
    { name: `shaped-${shape.view}-${shape.address}-${shape.origin}`, account: true },
  );
}

const shapes: Shape[] = (['html', 'markdown', 'text-and-links'] as const).flatMap((view) => [
  { view, address: 'url', origin: 'loopback' },
  { view, address: 'url', origin: 'site' },
  { view, address: 'path', origin: 'loopback' },
]);

test.describe("scripted:diligent through a foreign agent's own tools, whatever their shape", () => {
  for (const shape of shapes) {
    test(`upvotes the first post, signing in at the wall: the page as ${shape.view}, opened by ${shape.address}${shape.address === 'url' ? ` on the ${shape.origin === 'site' ? "site's own origin" : "replica's loopback URL"}` : ''}`, async ({ context }) => {
      const site = recordedHn();
      const record = await evaluate({ context, site, agent: shapedAgent(shape), model: 'scripted:diligent', task: upvoteFirstPost });
      expect(outcomeOf(record), record.summary).toBe('success');
      expect(record).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
      // A vote, a sign-in at the wall, the vote again, a read to check it, and the claim: never a page reloaded to the step cap.
      expect(record.iterations).toBeLessThanOrEqual(8);
    });
  }

  test('a tool that shows no page: the double says it cannot read the stories, and stops, rather than reloading the page to the step cap', async ({ context }) => {
    const record = await evaluate({ context, site: recordedHn(), agent: shapedAgent({ view: 'status', address: 'url', origin: 'loopback' }), model: 'scripted:diligent', task: upvoteFirstPost });
    expect(record).toMatchObject({ claimed: false, actual: false, summary: 'I cannot find the stories in what the tools show me, so I cannot do the task.', iterations: 3 });
  });

  test('a favorite by a tool that opens pages by path, and clicks: the double knows the item page it opened again', async ({ context }) => {
    const record = await evaluate({ context, site: recordedHn({ startLoggedIn: true }), agent: shapedAgent({ view: 'html', address: 'path', origin: 'loopback', click: true }), model: 'scripted:diligent', task: favoriteFirstStory });
    expect(outcomeOf(record), record.summary).toBe('success');
    expect(record).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
    expect(record.iterations).toBeLessThanOrEqual(8);
  });
});
