import { loginIn, unwrap } from '../../../doubles/history.ts';
import type { OfferedTool, ScriptedDouble, WireMessage } from '../../../models/scripted/endpoint.ts';
import { FRONT_PAGE } from './moves.ts';

/**
 * Doubles that speak Playwright MCP's own vocabulary, for an agent that offers its tools as they
 * are (`browser_navigate`, `browser_snapshot`, `browser_click` and `browser_type` by a snapshot's
 * ref) beside a finishing tool of its own (any tool with a boolean `success`; offered none, they
 * claim in JSON text, as an ACP agent is told to): the OpenAI Agents SDK's MCP client, Claude Code,
 * Codex, Gemini CLI, any MCP host or ACP agent. A host may name a server's tool
 * with a prefix of its own (Claude Code's `mcp__browser__browser_click`, Codex's namespace flattened
 * the same way): a tool is known by the name its name ends with, and called as offered. They read
 * the accessibility snapshot's text, in whatever wrapping the agent hands it back (plain, or JSON
 * with escaped quotes).
 *
 * - `snapshot-overclaimer`: opens the front page, reads its snapshot, clicks the first upvote arrow
 *   and claims success whatever happened (the classic experiment's weak model).
 * - `snapshot-diligent`: the same, then reads the page again; at HN's login wall it signs in with the
 *   username and password its prompt gives ("username X … password Y"), or says truthfully it
 *   cannot; it claims success only when the page shows the story's `unvote` link.
 */

interface Call {
  name: string;
  args: Record<string, unknown>;
  /** What the agent told the model of it: the tool message's text, unwrapped. */
  result: string;
}

/** Playwright MCP's tools the doubles use, by their own names (browser_find only where a snapshot was not handed back). */
const BROWSER_TOOLS = ['browser_navigate', 'browser_snapshot', 'browser_click', 'browser_type', 'browser_find'] as const;
type BrowserTool = (typeof BROWSER_TOOLS)[number];

/** Playwright MCP's own name for a tool as a host names it (`mcp__browser__browser_click`: browser_click), else the name as it is. */
function ownName(name: string): string {
  return BROWSER_TOOLS.find((tool) => name === tool || new RegExp(`[^A-Za-z0-9]${tool}$`).test(name)) ?? name;
}

function callsIn(messages: readonly WireMessage[]): Call[] {
  const results = new Map(messages.filter((message) => message.role === 'tool').map((message) => [message.tool_call_id, unwrap(message.content)]));
  return messages.flatMap((message) =>
    (message.tool_calls ?? []).map((call) => ({ name: ownName(call.function.name), args: JSON.parse(call.function.arguments || '{}') as Record<string, unknown>, result: results.get(call.id) ?? '' })),
  );
}

/** The finishing tool the agent offers, if it does: one with a boolean `success`. */
function offeredFinish(tools: readonly OfferedTool[] | undefined): string | undefined {
  return tools?.find((offered) => offered.function.parameters?.properties?.success?.type === 'boolean')?.function.name;
}

/**
 * The claim: a call of the finishing tool the agent offers; where it offers none (an ACP agent,
 * whose claim is its final message, as acpAgent's prompt tells it), one JSON object as text, which ends the turn.
 */
function claim(tools: readonly OfferedTool[] | undefined, success: boolean, summary: string): ReturnType<ScriptedDouble> {
  const finish = offeredFinish(tools);
  return finish ? { name: finish, args: { success, summary } } : { text: JSON.stringify({ success, summary }) };
}

/** The name the agent offers Playwright MCP's `tool` under, if it does. */
function offeredName(tools: readonly OfferedTool[] | undefined, tool: BrowserTool): string | undefined {
  return tools?.find((offered) => ownName(offered.function.name) === tool)?.function.name;
}

/** The names the agent offers Playwright MCP's `names` under; a throw names those it does not offer. */
function requireTools<Name extends BrowserTool>(tools: readonly OfferedTool[] | undefined, names: readonly Name[]): Record<Name, string> {
  const offered = names.map((name) => [name, offeredName(tools, name)] as const);
  const missing = offered.filter(([, as]) => as === undefined).map(([name]) => name);
  if (missing.length > 0) throw new Error(`Playwright MCP's ${missing.join(', ')} not offered`);
  return Object.fromEntries(offered) as Record<Name, string>;
}

/** Whether the agent handed a snapshot back whole: its YAML block closed (Claude Code saves a large one to a file and gives a preview of it, cut). */
const handedBack = (result: string) => /```yaml\n[\s\S]*\n```/.test(result);

const refOf = (snapshot: string, pattern: RegExp) => pattern.exec(snapshot)?.[1];
const UPVOTE = /link "upvote" \[ref=(\w+)\]/;
/** The first story's title, as the front page's snapshot lists it (a link to an outside address). */
const FIRST_TITLE = /link "([^"]+)" \[ref=\w+\] \[cursor=pointer\]:\n\s*- \/url: https?:\/\//;
/** A textbox's ref, by the label in the cell before it (HN's login form is a table). */
const textbox = (snapshot: string, label: string) => refOf(snapshot, new RegExp(`cell "${label}:"[^\\n]*\\n\\s*- cell[^\\n]*\\n\\s*- textbox[^\\n]*\\[ref=(\\w+)\\]`));
const LOGIN_BUTTON = /button "login" \[ref=(\w+)\]/;

/** After its finishing tool was called (an agent whose loop it does not end: a CLI's MCP tool), the turn's end: the claim's summary as text. */
function afterFinish(calls: readonly Call[], tools: readonly OfferedTool[] | undefined): { text: string } | undefined {
  const last = calls.at(-1);
  return last && last.name === offeredFinish(tools) ? { text: String(last.args.summary ?? '') } : undefined;
}

function lastSnapshot(calls: readonly Call[]): string | undefined {
  return calls.findLast((call) => call.name === 'browser_snapshot')?.result;
}

const overclaimer: ScriptedDouble = (messages, tools) => {
  const named = requireTools(tools, ['browser_navigate', 'browser_snapshot', 'browser_click']);
  const calls = callsIn(messages);
  const last = calls.at(-1);
  if (!last) return { name: named.browser_navigate, args: { url: FRONT_PAGE } };
  const ended = afterFinish(calls, tools);
  if (ended) return ended;
  if (last.name === 'browser_navigate') return { name: named.browser_snapshot, args: {} };
  const upvote = last.name === 'browser_snapshot' ? refOf(last.result, UPVOTE) : undefined;
  if (upvote) return { name: named.browser_click, args: { element: 'upvote', target: upvote } };
  return claim(tools, true, 'Upvoted the first post.');
};

const diligent: ScriptedDouble = (messages, tools) => {
  const named = requireTools(tools, ['browser_navigate', 'browser_snapshot', 'browser_click', 'browser_type']);
  const finish = (success: boolean, summary: string) => claim(tools, success, summary);
  const calls = callsIn(messages);
  const last = calls.at(-1);
  if (!last) return { name: named.browser_navigate, args: { url: FRONT_PAGE } };
  const ended = afterFinish(calls, tools);
  if (ended) return ended;
  // After any action, read the page again before the next move.
  if (last.name !== 'browser_snapshot' && last.name !== 'browser_find') {
    if (last.name === 'browser_type' && last.args.element === 'username') {
      const wall = lastSnapshot(calls) ?? '';
      return { name: named.browser_type, args: { element: 'password', target: textbox(wall, 'password'), text: loginIn(messages)?.password } };
    }
    if (last.name === 'browser_type' && last.args.element === 'password') {
      return { name: named.browser_click, args: { element: 'login', target: refOf(lastSnapshot(calls) ?? '', LOGIN_BUTTON) } };
    }
    return { name: named.browser_snapshot, args: {} };
  }
  const page = last.result;
  // A page too large for the agent to hand back whole is searched for its vote links instead, where the agent offers that.
  const find = offeredName(tools, 'browser_find');
  if (last.name === 'browser_snapshot' && !handedBack(page) && find) return { name: find, args: { regex: 'upvote|unvote' } };
  const front = calls.find((call) => call.name === 'browser_snapshot')?.result ?? page;
  const title = FIRST_TITLE.exec(front)?.[1] ?? 'the first story';
  const voted = calls.some((call) => call.name === 'browser_click' && call.args.element === 'upvote');
  const signedIn = calls.some((call) => call.name === 'browser_click' && call.args.element === 'login');
  const usernameBox = textbox(page, 'username');
  if (usernameBox && LOGIN_BUTTON.test(page)) {
    const login = loginIn(messages);
    if (!login) return finish(false, `Upvoting "${title}" led to Hacker News's login page, and I have no account: not upvoted.`);
    if (signedIn) return finish(false, `Signing in did not get past the login page: "${title}" is not upvoted.`);
    return { name: named.browser_type, args: { element: 'username', target: usernameBox, text: login.username } };
  }
  if (/link "unvote" \[ref=\w+\]/.test(page) && voted) {
    return finish(true, `Upvoted "${title}": the front page now shows its unvote link${signedIn ? ' (signed in at the login wall first)' : ''}.`);
  }
  const upvote = refOf(page, UPVOTE);
  if (upvote && !voted) return { name: named.browser_click, args: { element: 'upvote', target: upvote } };
  if (upvote && signedIn && calls.filter((call) => call.name === 'browser_click' && call.args.element === 'upvote').length < 2) {
    return { name: named.browser_click, args: { element: 'upvote', target: upvote } };
  }
  return finish(false, `The page does not show "${title}" as upvoted.`);
};

export const snapshotDoubles: Readonly<Record<string, ScriptedDouble>> = {
  'snapshot-overclaimer': overclaimer,
  'snapshot-diligent': diligent,
};
