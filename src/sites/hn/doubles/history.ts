import { parseJsonObject } from '../../../text.ts';
import { saysSignedIn, stringsIn } from './page.ts';
import type { OfferedTool, WireMessage } from '../../../models/scripted/endpoint.ts';
import { Toolbox, type Action, type Move } from './toolbox.ts';

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
}

/** A double: reads the conversation so far and answers its next move. */
export type Policy = (history: History) => Action;

/** A message's text: the string, or its text parts joined. */
function textOf(message: WireMessage): string {
  const content = message.content ?? '';
  return typeof content === 'string' ? content : content.flatMap((part) => (part.type === 'text' ? [part.text ?? ''] : [])).join('');
}

/** A tool's answer, whatever its form: JSON stays an object, anything else is its text. */
function observation(content: string): Record<string, unknown> {
  return parseJsonObject(content) ?? { text: content };
}

/** The move a call made: a page-opening call of an upvote link (`vote?id=42&how=up`) is a click on that arrow, as the double meant it. */
function stepOf(id: string, name: string, args: Record<string, unknown>, tools: Toolbox): Step {
  const move = tools.moveOf(name);
  if (move === 'navigate') {
    const address = stringsIn(args)[0] ?? '';
    const target = URL.canParse(address, 'https://site.invalid/') ? new URL(address, 'https://site.invalid/') : undefined;
    const story = target?.pathname === '/vote' && target.searchParams.get('how') === 'up' ? target.searchParams.get('id') : null;
    if (story) return { id, name: 'click', args: { selector: `#up_${story}` }, result: {} };
  }
  return { id, name: move, args, result: {} };
}

export function readHistory(messages: readonly WireMessage[], offered?: readonly OfferedTool[]): History {
  const tools = new Toolbox(offered);
  const steps: Step[] = [];
  const pending = new Map<string, Step>();
  const notes: History['notes'] = [];
  let turns = 0;
  let task: string | undefined;
  for (const message of messages) {
    if (message.role === 'assistant') {
      turns += 1;
      for (const call of message.tool_calls ?? []) {
        const step = stepOf(call.id, call.function.name, parseJsonObject(call.function.arguments) ?? {}, tools);
        pending.set(call.id, step);
        steps.push(step);
      }
    } else if (message.role === 'tool') {
      const step = pending.get(message.tool_call_id ?? '');
      if (step) step.result = observation(textOf(message));
    } else if (message.role === 'user') {
      const text = textOf(message);
      if (task === undefined) task = text;
      else notes.push({ text, afterStep: steps.length });
    }
  }
  return { task: task ?? '', steps, notes, turns, tools };
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
