import type { SentMessage, TraceEvent, TraceEventOf } from '../core/trace.ts';

/**
 * A run's trace as the exports read it: model calls, tool calls with their results, and every other
 * event, in the trace's order. Times are ms from the start of the trace.
 */

/** A model call: what came back (content, tool calls, tokens), or the error it ended in. */
export interface ModelCall {
  kind: 'model';
  seq: number;
  attempt: number;
  iteration: number;
  startMs: number;
  endMs: number;
  content: string | null;
  toolCalls: TraceEventOf<'model_response'>['toolCalls'];
  usage: TraceEventOf<'model_response'>['usage'];
  error?: { kind: string; message: string };
  /** What its request sent, as the trace keeps it (each message cut): the tool results among them are what the model was told of its last calls. */
  sent?: readonly SentMessage[];
}

/** A tool call, with its result once one was recorded (none when the run ended first). */
export interface ToolRun {
  kind: 'tool';
  call: TraceEventOf<'tool_call'>;
  result?: TraceEventOf<'tool_result'>;
  startMs: number;
  endMs: number;
}

/** Any other event: the harness's own (verification, approvals, stops…), an attempt's start, the run's end. */
export interface Happening {
  kind: 'event';
  event: TraceEvent;
}

export type Moment = ModelCall | ToolRun | Happening;

/** The trace's moments. `run_start` and `model_request` are not moments: they open the run and the calls. */
export function timeline(trace: readonly TraceEvent[]): Moment[] {
  const moments: Moment[] = [];
  const open = new Map<string, ToolRun>();
  // A model error says nothing of when its call began, nor an answer of what it was sent: the latest request did (a gateway's calls overlapping is the rare exception).
  let request: TraceEventOf<'model_request'> | undefined;
  for (const event of trace) {
    const { seq, attempt, iteration, atMs } = event;
    switch (event.type) {
      case 'run_start':
        break;
      case 'model_request':
        request = event;
        break;
      case 'model_response':
        moments.push({ kind: 'model', seq, attempt, iteration, startMs: atMs - event.ms, endMs: atMs, content: event.content, toolCalls: event.toolCalls, usage: event.usage, ...(request?.sent && { sent: request.sent }) });
        break;
      case 'model_error':
        moments.push({ kind: 'model', seq, attempt, iteration, startMs: request?.atMs ?? atMs, endMs: atMs, content: null, toolCalls: [], usage: { input: null, output: null }, error: { kind: event.kind, message: event.message }, ...(request?.sent && { sent: request.sent }) });
        break;
      case 'tool_call': {
        const run: ToolRun = { kind: 'tool', call: event, startMs: atMs, endMs: atMs };
        open.set(event.callId, run);
        moments.push(run);
        break;
      }
      case 'tool_result': {
        const run = open.get(event.callId);
        open.delete(event.callId);
        if (run) Object.assign(run, { result: event, endMs: atMs });
        // A result without its call (a trace cut at its start): the call is read back from the result.
        else moments.push({ kind: 'tool', call: { seq, attempt, iteration, atMs: atMs - event.ms, type: 'tool_call', callId: event.callId, name: event.name, arguments: '' }, result: event, startMs: atMs - event.ms, endMs: atMs });
        break;
      }
      default:
        moments.push({ kind: 'event', event });
    }
  }
  return moments;
}

/** The task as the agent was given it: the trace's first words, else the task's name. */
export function taskPrompt(trace: readonly TraceEvent[], task: string): string {
  const start = trace.find((event): event is TraceEventOf<'run_start'> => event.type === 'run_start');
  return start?.task ?? task;
}

/** An event's own fields, as one line of JSON: what it says beyond its type and stamp. */
export function eventData(event: TraceEvent): string {
  const { seq: _seq, attempt: _attempt, iteration: _iteration, atMs: _atMs, type: _type, ...data } = event;
  return JSON.stringify(data);
}

/** What a tool answered, as text: its output's JSON, or its error. */
export function resultText(result: TraceEventOf<'tool_result'>): string {
  return result.ok ? JSON.stringify(result.output ?? {}) : `error${result.kind ? ` (${result.kind})` : ''}: ${result.error ?? ''}`;
}
