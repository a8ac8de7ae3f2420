import { parseJsonObject } from '../text.ts';
import { saysSignedIn, stringsIn, urlIn } from './page.ts';
import type { OfferedTool, WireMessage } from '../models/scripted/endpoint.ts';
import { ownMove, programmedMove, Toolbox, type Action, type Dialect, type Move } from './toolbox.ts';

/**
 * A conversation as the doubles read it, on any site: the task, each call as the move it made and
 * what it answered, the notes after the task, the login the prompt gives.
 */

export interface Step {
  /** The tool call's id, which a claim cites as evidence. */
  id: string;
  /** The move the call made, in the doubles' own words (undefined for a tool they do not know). */
  name: Move | undefined;
  args: Record<string, unknown>;
  /** The tool's observation: its JSON object, or `{ text }` when it answered with anything else (HTML, text); `{ error }` when it failed. */
  result: Record<string, unknown>;
}

export interface History {
  /** The task: the first user message. */
  task: string;
  steps: Step[];
  /** User messages after the task (a harness's notes), with how many steps came before each. */
  notes: Array<{ text: string; afterStep: number }>;
  turns: number;
  /** The tools the agent offers, by what they can do. */
  tools: Toolbox;
  /** Where the agent's site answers (the replica's loopback URL, or the site's own origin): the doubles' addresses go there. */
  origin: string;
}

/** A double: reads the conversation so far and answers its next move. */
export type Policy = (history: History) => Action;

/** A message's text: the string, or its text parts a line each. */
function textOf(content: WireMessage['content']): string {
  return typeof content === 'string' ? content : (content ?? []).flatMap((part) => (part.type === 'text' ? [part.text ?? ''] : [])).join('\n');
}

/** A tool's answer, whatever its form: JSON stays an object, anything else is its text. */
function observation(content: string): Record<string, unknown> {
  return parseJsonObject(content) ?? { text: content };
}

/** An absolute http(s) address's origin, else undefined. */
const absolute = (text: string | undefined) => (text !== undefined && /^https?:\/\//i.test(text) && URL.canParse(text) ? new URL(text).origin : undefined);

/** The origin of the first absolute address the tools answered with, if one did. */
export function originIn(results: ReadonlyArray<Record<string, unknown>>): string | undefined {
  for (const result of results) {
    const origin = absolute(urlIn(result));
    if (origin) return origin;
  }
  return undefined;
}

/**
 * The origin the agent reaches the site at: the first address its tools answered with, else the
 * first its own words name (its system message, its tools' descriptions; never the task's, which
 * may name a link to submit), else the site's own.
 */
function siteOrigin(results: ReadonlyArray<Record<string, unknown>>, words: readonly string[], site: string): string {
  const answered = originIn(results);
  if (answered) return answered;
  for (const text of words) {
    // A sentence's full stop after an address is not part of it.
    const origin = absolute(/\bhttps?:\/\/[^\s"'<>)]+/i.exec(text)?.[0].replace(/[.,;:!?]+$/, ''));
    if (origin) return origin;
  }
  return new URL(site).origin;
}

/** The conversation so far, its calls read as the moves of `dialect`'s doubles. */
export function readHistory(messages: readonly WireMessage[], offered: readonly OfferedTool[] | undefined, dialect: Dialect): History {
  const tools = new Toolbox(offered, dialect);
  const calls: Array<{ id: string; name: string; args: Record<string, unknown>; result: Record<string, unknown> }> = [];
  const notes: History['notes'] = [];
  const words = (offered ?? []).map((tool) => tool.function.description ?? '');
  let turns = 0;
  let task: string | undefined;
  for (const message of messages) {
    if (message.role === 'assistant') {
      turns += 1;
      for (const call of message.tool_calls ?? []) calls.push({ id: call.id, name: call.function.name, args: parseJsonObject(call.function.arguments) ?? {}, result: {} });
    } else if (message.role === 'tool') {
      const call = calls.find((made) => made.id === message.tool_call_id);
      if (call) call.result = observation(textOf(message.content));
    } else if (message.role === 'system') words.unshift(textOf(message.content));
    else if (message.role === 'user') {
      const text = textOf(message.content);
      if (task === undefined) task = text;
      else notes.push({ text, afterStep: calls.length });
    }
  }
  // A program the double wrote for one move is that move, its value the move's result.
  const read = calls.map((call) => {
    const programmed = tools.moveOf(call.name) === 'run_program' ? programmedMove(call.args.source ?? call.args.program, call.result) : undefined;
    return { ...call, result: programmed?.result ?? call.result, programmed: programmed?.action };
  });
  const origin = siteOrigin(
    read.map((call) => call.result),
    words,
    dialect.site,
  );
  const steps = read.map(({ id, name, args, result, programmed }) => ({ id, ...(programmed ? { name: programmed.name as Move, args: programmed.args } : ownMove(name, args, tools, origin)), result }));
  return { task: task ?? '', steps, notes, turns, tools, origin };
}

/** The short notes a step's result carries (an agent's harness may tell its model things there), not a page's content. */
const NOTE_LIMIT = 300;
const notesIn = (step: Step) => stringsIn(step.result).filter((text) => text.length <= NOTE_LIMIT);

/**
 * The steps since the agent was last told it is signed in (by a harness's note after the task, or
 * a note in a tool's result), or undefined if it never was. Read by meaning, in any wording.
 */
export function stepsSinceLogin(history: History): Step[] | undefined {
  const told = history.notes.findLast((note) => saysSignedIn(note.text))?.afterStep;
  const shown = history.steps.findLastIndex((step) => notesIn(step).some(saysSignedIn));
  const since = Math.max(told ?? -1, shown === -1 ? -1 : shown + 1);
  return since === -1 ? undefined : history.steps.slice(since);
}

/**
 * A tool message's text: JSON's escapes undone when the agent wrapped the result in JSON, whole or
 * after lines of its own (codex-acp heads the MCP content with `Wall time: … seconds\nOutput:`).
 */
export function unwrap(content: WireMessage['content']): string {
  const text = textOf(content);
  const headed = text.search(/^[[{"]/m);
  for (const candidate of headed > 0 ? [text, text.slice(headed)] : [text]) {
    try {
      const value: unknown = JSON.parse(candidate);
      return typeof value === 'string' ? value : JSON.stringify(value, null, 1).replaceAll('\\n', '\n').replaceAll('\\"', '"');
    } catch {
      // not JSON: the next candidate
    }
  }
  return text;
}

/** The username and password a prompt gives, in any order of words around them. */
export function loginIn(messages: readonly WireMessage[]): { username: string; password: string } | undefined {
  const prompt = messages.filter((message) => message.role === 'user').map((message) => unwrap(message.content)).join('\n');
  const username = /\busername:? (\S+?)[,.;]?(?:\s|$)/i.exec(prompt)?.[1];
  const password = /\bpassword:? (\S+?)[.;]?(?:\s|$)/i.exec(prompt)?.[1];
  return username && password ? { username, password } : undefined;
}
