import { parseJsonObject } from '../../text.ts';

/** The OpenAI wire format the doubles receive, read back into what the agent did and was told. */
export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface Step {
  /** The tool call's id, which a claim cites as evidence. */
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The tool's observation, parsed; `{ error }` when it failed. */
  result: Record<string, unknown>;
}

export interface History {
  /** The task: the first user message. */
  task: string;
  steps: Step[];
  /** Harness messages after the task, with how many steps came before each. */
  notes: Array<{ text: string; afterStep: number }>;
  turns: number;
}

export function readHistory(messages: readonly WireMessage[]): History {
  const steps: Step[] = [];
  const pending = new Map<string, Step>();
  const notes: History['notes'] = [];
  let turns = 0;
  let task: string | undefined;
  for (const message of messages) {
    if (message.role === 'assistant') {
      turns += 1;
      for (const call of message.tool_calls ?? []) {
        const step: Step = { id: call.id, name: call.function.name, args: parseJsonObject(call.function.arguments) ?? {}, result: {} };
        pending.set(call.id, step);
        steps.push(step);
      }
    } else if (message.role === 'tool') {
      const step = pending.get(message.tool_call_id ?? '');
      if (step) step.result = parseJsonObject(message.content ?? '') ?? {};
    } else if (message.role === 'user') {
      if (task === undefined) task = message.content ?? '';
      else notes.push({ text: message.content ?? '', afterStep: steps.length });
    }
  }
  return { task: task ?? '', steps, notes, turns };
}

/** The steps since the harness last said the agent is logged in, or undefined if it never did. */
export function stepsSinceLogin(history: History): Step[] | undefined {
  const note = history.notes.findLast((entry) => /you are now logged in/i.test(entry.text));
  return note ? history.steps.slice(note.afterStep) : undefined;
}
