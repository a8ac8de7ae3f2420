import type { Page, Request as PageRequest } from '@playwright/test';
import { z } from 'zod';
import { defineTool, ToolError, type Tool } from './registry.ts';
import { readFirstElement } from './first-element.ts';
import { refusedIn } from '../reach.ts';

/** The claim a model makes through `finish`: what the harness will report unless a layer objects. */
export interface Claim {
  success: boolean;
  summary: string;
  /** The answer to a task that asks for information, judged against the site's ground truth. */
  answer?: string;
  /** Ids of the tool calls whose results support the claim (checked by the `evidence` layer). */
  evidence?: string[];
}

/** Run state the tools share with the harness: the claim, once made. */
export interface ToolState {
  claim?: Claim;
}

export const TEXT_LIMIT = 4000;

/** How long a click on a scripted link waits for the request it sends. */
const SCRIPTED_CLICK_MS = 2000;
/** After the requests a click's script sent are answered, how long the page may take to say whether its script navigates. */
const SCRIPT_NAVIGATES_MS = 100;

/** What a page action answers: where the browser is now. */
const landedSchema = z.object({ url: z.string(), title: z.string() });

/**
 * The page's title, read in the page's own world, as the harness's other reads of a page are:
 * `page.title()` reads it in Playwright's, and each world costs a new page about 7 ms to set up.
 */
const titleOf = (page: Page) => page.evaluate(() => document.title);

/**
 * What a click's script does after the click returns, however the script is attached (a listener,
 * not only HN's `onclick`): the requests it sent (`fetch()`), and a page it loads on their answers
 * (a reload). `settled()` waits for those requests, then for that page, within SCRIPTED_CLICK_MS.
 * Whether the script navigates is the page's to say: the click's look at its element starts counting
 * the document's Navigation API `navigate` events, and once the answers' handlers
 * ran (two timer turns later) the count says whether a page is coming. A fixed wait for one cost
 * every scripted click 100 ms, a vote on HN included.
 */
function scriptWatch(page: Page) {
  const sent: PageRequest[] = [];
  let navigations = 0;
  let loads = 0;
  const onRequest = (request: PageRequest) => {
    if (!request.isNavigationRequest()) sent.push(request);
    else if (request.frame() === page.mainFrame()) navigations += 1;
  };
  const onLoad = () => void (loads += 1);
  page.on('request', onRequest);
  page.on('load', onLoad);
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /**
   * Whether the page counted a navigation of its own, read two timer turns from now (after the handlers due by then ran): true
   * for a document that is gone (navigated away); false for a page too busy to answer in SCRIPT_NAVIGATES_MS, left to the
   * navigation requests counted.
   */
  const pageNavigates = () =>
    Promise.race([
      page.evaluate(() => new Promise<boolean>((resolve) => setTimeout(() => setTimeout(() => resolve(((window as { __harnessNavigations?: number }).__harnessNavigations ?? 0) > 0))))).catch(() => true),
      pause(SCRIPT_NAVIGATES_MS).then(() => false),
    ]);
  return {
    async settled() {
      // The click's handlers ran before it returned, but the requests they sent reach this process as events, later: a
      // round trip through the page lets them arrive, where a busy machine would otherwise read none.
      if (sent.length === 0) await pageNavigates();
      if (sent.length === 0) return;
      const deadline = Date.now() + SCRIPTED_CLICK_MS;
      await Promise.race([Promise.all(sent.map((request) => request.response().then((response) => response?.finished(), () => undefined))), pause(SCRIPTED_CLICK_MS)]);
      const scriptNavigates = await pageNavigates();
      // The navigations counted so far include the click's own, whose load waitForLoadState saw. A page said to be coming whose
      // request is not seen in SCRIPT_NAVIGATES_MS never comes (a page that crashed fails the evaluate too).
      const loaded = () => loads >= navigations;
      const quiet = Date.now() + SCRIPT_NAVIGATES_MS;
      while (Date.now() < deadline && !(loaded() && (navigations > 0 || !scriptNavigates || Date.now() >= quiet))) await pause(10);
      if (navigations > 0) await page.waitForLoadState('load');
    },
    stop() {
      page.off('request', onRequest);
      page.off('load', onLoad);
    },
  };
}

/** The first element matching `selector`; a tool error when none does. */
export async function firstMatch(page: Page, selector: string) {
  const locator = page.locator(selector).first();
  if ((await locator.count()) === 0) throw new ToolError(`no element matches ${selector}`);
  return locator;
}

/** A `get_text`, and the same reading with no cap of its own (the `output` layer pages it instead). */
export type TextTool = Tool & { uncapped(): Tool };

/**
 * A `get_text`: what `read` makes of the page, capped at `textLimit` characters (`truncated` says
 * where it was cut). `about` opens its description.
 */
export function getTextTool(page: () => Page, about: string, read: (page: Page) => Promise<string>, textLimit: number): TextTool {
  const tool = defineTool({
    name: 'get_text',
    effect: 'read',
    description: `${about}${Number.isFinite(textLimit) ? ` (at most ${textLimit} characters)` : ''}.`,
    parameters: z.object({}),
    output: z.object({ url: z.string(), text: z.string(), truncated: z.string().optional() }),
    pageText: /^text$/,
    async execute() {
      const text = await read(page());
      if (text.length <= textLimit) return { url: page().url(), text };
      return { url: page().url(), text: text.slice(0, textLimit), truncated: `showing ${textLimit} of ${text.length} characters` };
    },
  });
  return { ...tool, uncapped: () => getTextTool(page, about, read, Infinity) };
}

/**
 * The browser tools, bound to one page of a session the harness opened: tools never open or
 * close the browser. Actions wait for the navigation they cause, or for the page to settle.
 * `textLimit` caps get_text; the `output` layer lifts it and pages long outputs instead. `siteTools`
 * (the site kit's own, `Site.tools`) come before `finish`, which stays last.
 */
export function browserTools(page: Page, state: ToolState, { textLimit = TEXT_LIMIT, siteTools = [] }: { textLimit?: number; siteTools?: readonly Tool[] } = {}): Tool[] {
  const element = (selector: string) => firstMatch(page, selector);

  return [
    defineTool({
      name: 'navigate',
      effect: 'act',
      description: "Open a URL of the site in the browser (http or https, on the site's origin).",
      parameters: z.object({ url: z.string().min(1) }),
      output: landedSchema.extend({ status: z.number().nullable() }),
      pageText: /^title$/,
      async execute({ url }) {
        // Checked here, not by the schema: a URL refused is the run's escape attempt, and the model is told why.
        const refused = refusedIn(page.context(), url);
        if (refused) throw new ToolError(`${url} refused: ${refused}`);
        const response = await page.goto(url, { waitUntil: 'load' });
        return { url: page.url(), status: response?.status() ?? null, title: await titleOf(page) };
      },
    }),
    defineTool({
      name: 'current_url',
      effect: 'read',
      description: 'The URL the browser is on.',
      parameters: z.object({}),
      output: z.object({ url: z.string() }),
      async execute() {
        return { url: page.url() };
      },
    }),
    getTextTool(() => page, 'The visible text of the page', (page) => page.locator('body').innerText(), textLimit),
    defineTool({
      name: 'fill',
      effect: 'act',
      description: 'Type a value into the input matching a CSS selector.',
      parameters: z.object({ selector: z.string().min(1), value: z.string() }),
      output: z.object({ filled: z.string() }),
      async execute({ selector, value }) {
        await (await element(selector)).fill(value);
        return { filled: selector };
      },
    }),
    defineTool({
      name: 'click',
      effect: 'act',
      description: 'Click the first element matching a CSS selector; waits for any navigation, or for the request a scripted link sends.',
      parameters: z.object({ selector: z.string().min(1) }),
      output: landedSchema.extend({ clicked: z.string() }),
      pageText: /^title$/,
      async execute({ selector }) {
        const first = await readFirstElement(page, selector, (node) => {
          // From now on the pages this document's scripts load (a reload, a form's submit()) are counted,
          // for scriptWatch: here, since this look in the page comes before the click anyway.
          const counted = window as { __harnessNavigations?: number };
          if (counted.__harnessNavigations === undefined) {
            counted.__harnessNavigations = 0;
            const navigation = (globalThis as unknown as { navigation: EventTarget }).navigation;
            navigation.addEventListener('navigate', (event) => {
              // A same-document one (a hash, pushState) loads no page to wait for.
              if (!(event as Event & { destination: { sameDocument: boolean } }).destination.sameDocument) counted.__harnessNavigations = (counted.__harnessNavigations ?? 0) + 1;
            });
          }
          const link = node.closest('a') ?? node;
          const box = node.getBoundingClientRect();
          // Playwright's isVisible: a non-empty box, and not hidden by display or visibility.
          const visible = box.width > 0 && box.height > 0 && node.checkVisibility({ visibilityProperty: true });
          const description = `${link.tagName.toLowerCase()}${link.id ? `#${link.id}` : ''}${link.getAttribute('href') ? ` href=${link.getAttribute('href')}` : ''}`;
          return { visible, clicked: description, scripted: link.classList.contains('clicky') || link.hasAttribute('onclick') };
        });
        if (!first) throw new ToolError(`no element matches ${selector}`);
        if (!first.visible) throw new ToolError(`${selector} is not visible`);
        const { clicked, scripted } = first;
        const target = page.locator(selector).first();
        // A scripted link (a background vote, as on HN) sends its request after the click returns: wait
        // for it, so that nothing the click did is still in flight when the run ends.
        const before = page.url();
        const backgroundRequest = scripted ? page.waitForEvent('requestfinished', { timeout: SCRIPTED_CLICK_MS }).catch(() => undefined) : undefined;
        const script = scriptWatch(page);
        try {
          await target.click();
          await page.waitForLoadState('load');
          if (page.url() === before) await backgroundRequest;
          await script.settled();
        } finally {
          script.stop();
        }
        return { clicked, url: page.url(), title: await titleOf(page) };
      },
    }),
    defineTool({
      name: 'has_class',
      effect: 'read',
      description: 'Whether the first element matching a CSS selector has a class.',
      parameters: z.object({ selector: z.string().min(1), className: z.string().min(1) }),
      output: z.object({ selector: z.string(), className: z.string(), present: z.boolean(), classes: z.string() }),
      async execute({ selector, className }) {
        const classes = (await (await element(selector)).getAttribute('class')) ?? '';
        return { selector, className, present: classes.split(/\s+/).includes(className), classes };
      },
    }),
    ...siteTools,
    defineTool({
      name: 'finish',
      effect: 'read',
      description: 'End the task and report the outcome: success=true only if the task is done. When the task asks a question, put the answer alone in answer.',
      parameters: z.object({
        success: z.boolean(),
        summary: z.string().max(2000),
        answer: z.string().max(2000).optional().describe('only when the task asks a question: the answer itself, exactly as the site shows it, with nothing around it'),
        evidence: z.array(z.string()).max(50).optional().describe('ids of the tool calls whose results show the outcome'),
      }),
      output: z.object({ recorded: z.literal(true) }),
      async execute(claim) {
        state.claim = claim;
        return { recorded: true };
      },
    }),
  ];
}
