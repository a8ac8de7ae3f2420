import type { ScriptedDouble } from '../models/scripted/endpoint.ts';
import { unwrapObservations } from '../models/scripted/results.ts';
import { callFor } from './calls.ts';
import { loginIn, originIn, readHistory, type History, type Step } from './history.ts';
import { act, finish } from './moves.ts';
import { readableText, saysSignedIn, showsLoginWall, urlIn } from './page.ts';
import { planFor, type Plan, type PlannedMove } from './plans.ts';
import type { Action, Dialect } from './toolbox.ts';

/**
 * The doubles that follow a task's plan (its reference's moves, rehearsal.ts) on any site, through
 * whatever tools the agent offers (toolbox.ts and calls.ts map each move onto them):
 *
 * - `diligent` makes the reference's moves one by one, stops with a truthful failure at the first
 *   that fails, signs in where the site asks (with the login the prompt gives, or after the
 *   harness's `login` layer says it did), then reads the page and claims success only when it shows
 *   what the reference's work showed (the lines it made appear, and gone the ones it removed), with
 *   the reference's answer; it cites the calls that acted and the read.
 * - `overclaimer` opens the reference's first page (the site's start page when it opened none) and
 *   claims success, having done nothing.
 */

/** A policy over the plan and the conversation read (results unwrapped, the agent's origin found); its moves' addresses are the plan's, on the site's own origin. */
type Follower = (plan: Plan, history: History) => Action;

/** The login form a page shows, by its password field: what a follower fills with the prompt's login. */
const LOGIN_FORM = 'form:has(input[type="password"])';
const LOGIN = {
  username: `${LOGIN_FORM} input:not([type="hidden"]):not([type="password"]):not([type="submit"]):not([type="checkbox"])`,
  password: `${LOGIN_FORM} input[type="password"]`,
  submit: `${LOGIN_FORM} button, ${LOGIN_FORM} input[type="submit"]`,
};
/** Sign-ins a run may make before a follower says it cannot get past the login page. */
const MAX_LOGINS = 2;

const isLoginStep = (step: Step) => Object.values(LOGIN).includes(String(step.args.selector));
const submitted = (step: Step) => step.name === 'click' && step.args.selector === LOGIN.submit;

/** Whether a result shows a login page: a login wall (a login address, a password field), or a page titled or addressed as one (`Sign in`, `/signin`). */
function atLoginPage(result: Record<string, unknown>): boolean {
  const url = urlIn(result);
  const path = url !== undefined && URL.canParse(url, 'https://site.invalid/') ? new URL(url, 'https://site.invalid/').pathname : '';
  return showsLoginWall(result) || /\/(?:log|sign)[-_]?in\b/i.test(path) || (typeof result.title === 'string' && /^\s*(?:log|sign)\s?in\b/i.test(result.title));
}

/** One move, said for a person. */
function said(move: PlannedMove): string {
  const args = move.args as Record<string, string>;
  return move.name === 'navigate' ? `open ${args.url}` : move.name === 'fill' ? `fill ${args.selector}` : `click ${args.selector}`;
}

/** Page text, whitespace collapsed, as it is compared with the plan's lines. */
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

/** How many times the diligent double reads the page before it says the task's outcome is not there. */
const LOOKS = 4;

export const diligent: Follower = (plan, history) => {
  if (plan.unusable !== undefined) throw new Error(`cannot follow the task: ${plan.unusable}`);
  const steps = history.steps;
  const latest = steps.at(-1);
  // Signing in with the prompt's login: the username, the password, then the form's button.
  if (latest && isLoginStep(latest)) {
    if ('error' in latest.result) return finish(false, `I could not sign in: ${String(latest.result.error)}. The task is not done.`);
    const login = loginIn([{ role: 'user', content: history.task }])!;
    if (latest.args.selector === LOGIN.username) return act('fill', { selector: LOGIN.password, value: login.password });
    if (latest.args.selector === LOGIN.password) return act('click', { selector: LOGIN.submit });
    if (atLoginPage(latest.result)) return finish(false, 'Signing in with the login the task gives did not get past the login page: the task is not done.');
  }
  // The plan starts again after each sign-in: its own, or one a harness's note says it made (a page that says "signed in as" is no note).
  const told = history.notes.filter((note) => saysSignedIn(note.text));
  const since = steps.slice(Math.max(steps.findLastIndex(submitted) + 1, told.at(-1)?.afterStep ?? 0));
  const logins = steps.filter(submitted).length + told.length;
  if (latest && since.includes(latest) && atLoginPage(latest.result)) {
    if (logins >= MAX_LOGINS) return finish(false, 'Signing in did not get me past the login page: the task is not done.');
    const login = loginIn([{ role: 'user', content: history.task }]);
    if (!login) return finish(false, 'The site asked me to log in, and I have no login for it: the task is not done.');
    return act('fill', { selector: LOGIN.username, value: login.username });
  }
  for (const [index, step] of since.slice(0, plan.moves.length).entries()) {
    if ('error' in step.result) return finish(false, `I could not ${said(plan.moves[index]!)}: ${String(step.result.error)}. The task is not done.`);
  }
  const next = plan.moves[since.length];
  if (next) return act(next.name, next.args);
  const reads = since.slice(plan.moves.length);
  const read = reads.at(-1);
  if (!read) return act('get_text');
  if (plan.impossible !== undefined) return finish(false, `The task cannot be done: ${plan.impossible}.`);
  const page = flat(readableText(read.result));
  const missing = [...plan.shows, ...(plan.answer === undefined ? [] : [plan.answer])].filter((line) => !page.includes(flat(line)));
  const left = plan.hides.filter((line) => page.includes(flat(line)));
  if (missing.length > 0 || left.length > 0) {
    // A page a script reloads after its request may still be the old one: a careful user looks again, a few times.
    if (reads.length < LOOKS) return act('get_text');
    const wrong = [...missing.map((line) => `does not show "${line}"`), ...left.map((line) => `still shows "${line}"`)].join(', ');
    return finish(false, `I made the task's moves, but the page ${wrong}: the task is not done.`);
  }
  const acted = since.slice(0, plan.moves.length).filter((_, index) => plan.moves[index]!.acted);
  return finish(true, `Done: ${plan.moves.map(said).join('; ')}. The page shows the outcome.`, [...acted, read].map((step) => step.id), plan.answer);
};

export const overclaimer: Follower = (plan, history) => {
  const opened = plan.moves.find((move) => move.name === 'navigate');
  const start = opened ? String((opened.args as { url: string }).url) : `${plan.origin}/`;
  if (!history.steps.some((step) => step.name === 'navigate')) return act('navigate', { url: start });
  return finish(true, 'Done: the task is complete.');
};

/** The agent's origin: the first absolute address its tools answered with, else the site's own. */
function agentOrigin(steps: readonly Step[], plan: Plan): string {
  return originIn(steps.map((step) => step.result)) ?? plan.origin;
}

/** What a follower thinks in: the moves every site's doubles make, on the plan's site (a call opens its addresses on the agent's origin: calls.ts). */
const dialectOf = (plan: Plan): Dialect => ({ site: `${plan.origin}/`, home: `${plan.origin}/`, readers: [] });

/** A follower as the scripted endpoint calls it: the conversation's plan, its history read (each result unwrapped), its move made with the offered tools. */
function double(follower: Follower): (plan: Plan) => ScriptedDouble {
  return (plan) => (messages, tools) => {
    const read = readHistory(messages, tools, dialectOf(plan));
    const steps = read.steps.map((step) => ({ ...step, result: unwrapObservations(step.result) as Record<string, unknown> }));
    const history = { ...read, steps, origin: agentOrigin(steps, plan) };
    return callFor(follower(plan, history), history);
  };
}

const followers = { diligent: double(diligent), overclaimer: double(overclaimer) };

/**
 * `diligent` and `overclaimer` for any site: with a plan for the conversation's task (the fixture
 * rehearsed its reference), they follow it; without one, the kit's own double of that name answers
 * (HN's, which read HN's pages). Other names are the kit's alone.
 */
export function onAnySite(kit: Readonly<Record<string, ScriptedDouble>>): Record<string, ScriptedDouble> {
  const either = (name: keyof typeof followers): ScriptedDouble => (messages, tools) => {
    const plan = planFor(messages);
    if (plan) return followers[name](plan)(messages, tools);
    const own = kit[name];
    if (!own) throw new Error('no plan for this task: the fixture rehearses a task before a run of this double (harness.run)');
    return own(messages, tools);
  };
  return { ...kit, diligent: either('diligent'), overclaimer: either('overclaimer') };
}

/** The doubles that follow a plan, as `scripted:<name>`. */
export const FOLLOWERS: readonly string[] = Object.keys(followers);
