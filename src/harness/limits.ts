/** An absolute cap, whatever the layers: a harness with no guardrails must still end. */
export const HARD_MAX_ITERATIONS = 50;

/** How long one tool call may take when nothing narrower applies: a navigation that never answers ends here. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** Thrown through the loop when the run's signal aborts; `runHarness` turns it into stopReason `timeout`. */
export class RunAborted extends Error {
  override name = 'RunAborted';
}

export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * `work`'s outcome, or TIMED_OUT once `ms` have passed, or a RunAborted rejection once `signal`
 * aborts, whichever comes first. The loser is abandoned, not stopped: its outcome is dropped (a
 * rejection included, so it is never unhandled).
 */
export function race<T>(work: Promise<T>, { ms = Infinity, signal }: { ms?: number; signal?: AbortSignal }): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      work.catch(() => {});
      return reject(abortedError(signal));
    }
    const onAbort = () => {
      done();
      reject(abortedError(signal!));
    };
    const timer = Number.isFinite(ms) ? setTimeout(() => (done(), resolve(TIMED_OUT)), Math.max(0, ms)) : undefined;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (done(), reject(error)),
    );
  });
}

/** Why the signal aborted, in one line. */
export function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.message.split('\n')[0]!;
  return typeof reason === 'string' && reason !== '' ? reason : 'the run was aborted';
}

function abortedError(signal: AbortSignal): RunAborted {
  return new RunAborted(`the run was cut short: ${abortReason(signal)}`);
}

/** The longest string a tool's output may carry into the trace and the conversation (a 100 MB page text would break both). */
export const MAX_OUTPUT_CHARS = 1_000_000;

export interface CutString {
  /** Where in the value: `text`, `value.items.3`. */
  path: string;
  chars: number;
}

/** The value with every string longer than `max` cut to `max`, saying so in the string; and what was cut. */
export function capStrings<T>(value: T, max = MAX_OUTPUT_CHARS): { value: T; cut: CutString[] } {
  const cut: CutString[] = [];
  const walk = (node: unknown, path: string[]): unknown => {
    if (typeof node === 'string') {
      if (node.length <= max) return node;
      cut.push({ path: path.join('.') || '(output)', chars: node.length });
      return `${node.slice(0, max)}… [cut by the harness: ${node.length} characters in all]`;
    }
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...path, String(index)]));
    if (node !== null && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item, [...path, key])]));
    return node;
  };
  const capped = walk(value, []) as T;
  return { value: cut.length > 0 ? capped : value, cut };
}
