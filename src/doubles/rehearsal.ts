import type { Browser, Page } from '@playwright/test';
import type { SiteFactory } from '../core/site.ts';
import type { Task } from '../core/task.ts';
import { taskAt } from '../eval/tasks.ts';
import { BrowserReach } from '../reach.ts';
import { registerPlan, type Plan, type PlannedMove } from './plans.ts';

/**
 * A rehearsal: the task's reference solution run once on a scratch instance of the run's site (a
 * fresh one from the same factory: the replica is deterministic), in a page that records its moves
 * (`page.goto`, a click or fill by selector or by Locator), what the site saw as actions during
 * each, and the page's text before each move and at the end. The plan it makes is what
 * `scripted:diligent` follows through the agent's own tools (follow.ts).
 */

/** Methods that act, as the browser tool that makes the same move (a checkbox is checked by a click). */
const MOVES: Record<string, 'click' | 'fill'> = { click: 'click', check: 'click', uncheck: 'click', setChecked: 'click', fill: 'fill', clear: 'fill' };
/** Methods that act in a way no browser tool offers: a reference that uses one cannot be followed. */
const UNFOLLOWABLE = new Set(['dblclick', 'press', 'pressSequentially', 'type', 'selectOption', 'setInputFiles', 'dragTo', 'tap', 'dispatchEvent', 'goBack', 'goForward', 'setContent', 'down', 'up', 'insertText', 'move', 'wheel']);
/** The most lines of text a plan expects to appear, or to be gone: enough to tell, few enough to be read in any page view. */
const MAX_LINES = 5;

interface Recorded extends Omit<PlannedMove, 'acted'> {
  /** The page's address and text lines before the move. */
  from: string;
  lines: string[];
  /** How many actions the site had seen when the move began. */
  actionsBefore: number;
}

/** The page's visible text as lines, whitespace collapsed; none when the page cannot be read (it is navigating). */
async function lines(page: Page): Promise<string[]> {
  const text = await page
    .locator('body')
    .innerText({ timeout: 2_000 })
    .catch(() => '');
  return text.split('\n').map((line) => line.replace(/\s+/g, ' ').trim()).filter((line) => line !== '' && line.length <= 200);
}

/** The class of one of Playwright's client objects, as its bundle names it otherwise (`_Locator`, `Keyboard2`). */
const classOf = (value: object) => value.constructor?.name.replace(/^_|\d+$/g, '') ?? '';
const isA = (value: unknown, kind: string) => typeof value === 'object' && value !== null && classOf(value) === kind;

/**
 * `page` as the reference sees it: every page and locator method passes through, and the moves are
 * recorded first. `why` says why the moves cannot be followed, once a method showed it.
 */
function recordingPage(page: Page, actions: () => number) {
  const moves: Recorded[] = [];
  const state: { why?: string } = {};
  const record = async (name: Recorded['name'], args: Recorded['args']) => {
    moves.push({ name, args, from: page.url(), lines: await lines(page), actionsBefore: actions() });
  };
  const unfollowable = (what: string) => (state.why ??= `its reference calls ${what}, which no browser tool does`);
  const selectorOf = (locator: object): string | undefined => {
    const selector = (locator as { _selector?: unknown })._selector;
    if (typeof selector !== 'string') unfollowable("a Locator whose selector Playwright's client does not show");
    return typeof selector === 'string' ? selector : undefined;
  };
  const wrap = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(wrap);
    if (value === page) return proxied(page, 'page');
    if (isA(value, 'Locator')) return proxied(value as object, 'locator');
    if (isA(value, 'Keyboard') || isA(value, 'Mouse') || isA(value, 'Touchscreen')) return proxied(value as object, 'device');
    return value;
  };
  const proxies = new WeakMap<object, object>();
  const proxied = (target: object, kind: 'page' | 'locator' | 'device'): object => {
    const known = proxies.get(target);
    if (known) return known;
    const proxy = new Proxy(target, {
      get(object, property, receiver) {
        const value: unknown = Reflect.get(object, property, receiver === proxy ? object : receiver);
        if (typeof property !== 'string') return value;
        if (typeof value !== 'function') return wrap(value);
        return (...args: unknown[]) => {
          const call = () => {
            const result: unknown = Reflect.apply(value, object, args);
            return result instanceof Promise ? result.then(wrap) : wrap(result);
          };
          if (kind === 'device') {
            unfollowable(`${classOf(object).toLowerCase()}.${property}()`);
            return call();
          }
          if (UNFOLLOWABLE.has(property)) {
            unfollowable(`${kind}.${property}()`);
            return call();
          }
          const move = MOVES[property];
          if (kind === 'page' && property === 'goto') return record('navigate', { url: new URL(String(args[0]), page.url()).href }).then(call);
          if (kind === 'page' && property === 'reload') return record('navigate', { url: page.url() }).then(call);
          if (!move) return call();
          // A page's method takes the selector first; a locator's is its own.
          const selector = kind === 'page' ? String(args[0]) : selectorOf(object);
          const rest = kind === 'page' ? args.slice(1) : args;
          if (selector === undefined) return call();
          const filled = property === 'clear' ? '' : String(rest[0]);
          return record(move, move === 'fill' ? { selector, value: filled } : { selector }).then(call);
        };
      },
    });
    proxies.set(target, proxy);
    return proxy;
  };
  return { page: proxied(page, 'page') as Page, moves, state };
}

/** Lines in `these` and not in `those`, the first few. */
const without = (these: readonly string[], those: readonly string[]) => [...new Set(these.filter((line) => !those.includes(line)))].slice(0, MAX_LINES);

const samePage = (one: string, other: string) => URL.canParse(one) && URL.canParse(other) && new URL(one).pathname === new URL(other).pathname;

/**
 * The task's plan on a site of `factory`: its reference run on a scratch instance in a context of
 * `browser`, recorded. Registered for the doubles by the task's prompt, and answered. Undefined when
 * the task does not apply to the site (its run will be skipped anyway).
 */
export async function rehearse(task: Task, factory: SiteFactory, browser: Browser): Promise<Plan | undefined> {
  const site = await factory.create();
  const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
  const reach = new BrowserReach(site.origin);
  try {
    await reach.guard(context);
    await site.attach(context);
    const start = await site.snapshot();
    if (task.whyNotApplicable?.(start) !== undefined) return undefined;
    const resolved = taskAt(task, start);
    const plan: Plan = { prompt: resolved.prompt, origin: site.origin, moves: [], shows: [], hides: [] };
    if (!resolved.reference) return keep({ ...plan, unusable: `task "${task.name}" has no reference solution (task.reference) to follow` });
    let actions = 0;
    context.on('request', (request) => {
      const action = URL.canParse(request.url()) && new URL(request.url()).origin === site.origin ? site.classify({ method: request.method(), url: request.url(), body: request.postData() ?? undefined }) : undefined;
      if (action && action.kind !== 'login') actions += 1;
    });
    const page = await context.newPage();
    const recorder = recordingPage(page, () => actions);
    let outcome;
    try {
      outcome = (await resolved.reference(recorder.page, site)) ?? {};
    } catch (error) {
      return keep({ ...plan, unusable: `its reference failed on a scratch site: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}` });
    }
    await page.waitForLoadState('load').catch(() => undefined);
    await site.idle();
    const end = { url: page.url(), lines: await lines(page) };
    const moves = recorder.moves.map(({ name, args, actionsBefore }, index): PlannedMove => ({ name, args, acted: (recorder.moves[index + 1]?.actionsBefore ?? actions) > actionsBefore }));
    const first = recorder.moves.find((move, index) => moves[index]!.acted);
    const answered = outcome.impossible !== undefined ? { impossible: outcome.impossible } : outcome.answer !== undefined ? { answer: outcome.answer } : {};
    return keep({
      ...plan,
      moves,
      ...(recorder.state.why !== undefined && { unusable: recorder.state.why }),
      shows: first ? without(end.lines, first.lines) : [],
      hides: first && samePage(first.from, end.url) ? without(first.lines, end.lines) : [],
      ...answered,
    });
  } finally {
    await context.close().catch(() => undefined);
    await reach.release();
    await site.dispose?.();
  }
}

/** Plans made in this worker, by site and task: a site's instances are alike, so one rehearsal serves every run of a task on it. */
const rehearsed = new Map<string, Promise<Plan | undefined>>();

/** `rehearse`, once per site (its factory's name and condition) and task revision in this worker; a plan made before is registered again. */
export async function rehearseOnce(task: Task, factory: SiteFactory, browser: Browser): Promise<Plan | undefined> {
  const key = JSON.stringify([factory.name, factory.condition, task.name, task.revision]);
  const made = rehearsed.get(key);
  if (made) return made.then((plan) => plan && keep(plan));
  const making = rehearse(task, factory, browser);
  rehearsed.set(key, making);
  // A rehearsal that threw (the browser went) is tried again by the next run.
  return making.catch((error: unknown) => {
    rehearsed.delete(key);
    throw error;
  });
}

function keep(plan: Plan): Plan {
  registerPlan(plan);
  return plan;
}
