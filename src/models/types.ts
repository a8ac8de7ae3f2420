import type { ChatMessage, Usage } from '../core/model.ts';

export type { ChatImage, ChatMessage, ChatRequest, ChatResponse, Model, ResponseFormat, Sampling, ToolCall, ToolSchema, Usage } from '../core/model.ts';

/** The messages without their images' pixels (each image message keeps its text, which names the image): for anything saved or shown. */
export function withoutImages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => (message.role === 'user' && message.images ? { role: 'user', content: message.content } : message));
}

/** A provider's usage fields read defensively: only a finite non-negative number is a count. */
export function readUsage(fields: { input: [name: string, value: unknown]; output: [name: string, value: unknown]; cachedInput?: unknown }): Usage {
  const problems: string[] = [];
  const count = ([name, value]: [string, unknown]) => {
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
    problems.push(`${name} is ${value === undefined ? 'missing' : JSON.stringify(value) ?? String(value)}`);
    return null;
  };
  const usage: Usage = { input: count(fields.input), output: count(fields.output) };
  // A cached count is optional (most servers send none): one that is not a usable count is left out, so the input is priced in full.
  const cached = fields.cachedInput;
  if (typeof cached === 'number' && Number.isFinite(cached) && cached >= 0 && usage.input !== null) usage.cachedInput = Math.min(cached, usage.input);
  return problems.length > 0 ? { ...usage, problem: problems.join(', ') } : usage;
}

/** Tokens so far plus one call's: a count unknown (null) once stays unknown, never counted as zero. */
export function addUsage(total: Usage, usage: Usage): Usage {
  return {
    input: total.input === null || usage.input === null ? null : total.input + usage.input,
    output: total.output === null || usage.output === null ? null : total.output + usage.output,
    ...((total.cachedInput !== undefined || usage.cachedInput !== undefined) && { cachedInput: (total.cachedInput ?? 0) + (usage.cachedInput ?? 0) }),
  };
}

/** A provider failure after the provider's own retries: the run stops with `stopReason: 'model_error'`. */
export class ModelError extends Error {
  override name = 'ModelError';
  constructor(
    readonly kind: 'rate_limited' | 'server' | 'timeout' | 'network' | 'bad_response',
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A provider that could not be reached at all: the error names the endpoint, without any user or password its URL carries. */
export function unreachable(provider: string, url: string, detail: string): ModelError {
  let endpoint = 'its endpoint';
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    endpoint = parsed.href.replace(/\/$/, '');
  } catch {
    // Not a URL: the generic name stands.
  }
  return new ModelError('network', `${provider}: cannot reach ${endpoint} (${detail})`);
}

/** What an HTTP error status says of the provider: throttled, broken, or a request it refused. */
export function kindOfStatus(status: number): ModelError['kind'] {
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server';
  return 'bad_response';
}
