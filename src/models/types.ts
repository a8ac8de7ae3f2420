/**
 * The one interface every model provider implements: messages and tool schemas in, text or tool
 * calls and token usage out. Messages follow the OpenAI chat shape, the field's lingua franca.
 */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; images?: ChatImage[] }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/**
 * An image in a user message (a screenshot the model asked to see). `content` still says in text
 * what it is (`[image shot_1, 1280×720, 41 KB]`): that text, never the pixels, is what traces and
 * records show of it. `detail` is OpenAI's resolution hint; other providers ignore it.
 */
export interface ChatImage {
  mimeType: 'image/jpeg';
  /** The image's bytes, base64. */
  data: string;
  detail?: 'low' | 'high';
}

/** The messages without their images' pixels (each image message keeps its text, which names the image): for anything saved or shown. */
export function withoutImages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => (message.role === 'user' && message.images ? { role: 'user', content: message.content } : message));
}

/** A tool call as the model wrote it: `arguments` is raw JSON text, parsed (and maybe rejected) by the harness. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ToolSchema {
  name: string;
  description: string;
  /** JSON Schema of the parameters object. */
  parameters: Record<string, unknown>;
}

/** Tokens a model call used; a count is null when the provider's was unusable (missing, "NaN", negative). */
export interface Usage {
  input: number | null;
  output: number | null;
  /** Why a count is null, in the provider's own field names. */
  problem?: string;
}

/** A provider's usage fields read defensively: only a finite non-negative number is a count. */
export function readUsage(fields: { input: [name: string, value: unknown]; output: [name: string, value: unknown] }): Usage {
  const problems: string[] = [];
  const count = ([name, value]: [string, unknown]) => {
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
    problems.push(`${name} is ${value === undefined ? 'missing' : JSON.stringify(value) ?? String(value)}`);
    return null;
  };
  const usage: Usage = { input: count(fields.input), output: count(fields.output) };
  return problems.length > 0 ? { ...usage, problem: problems.join(', ') } : usage;
}

/** Tokens so far plus one call's: a count unknown (null) once stays unknown, never counted as zero. */
export function addUsage(total: Usage, usage: Usage): Usage {
  return {
    input: total.input === null || usage.input === null ? null : total.input + usage.input,
    output: total.output === null || usage.output === null ? null : total.output + usage.output,
  };
}

export interface ChatRequest {
  messages: readonly ChatMessage[];
  tools: readonly ToolSchema[];
  signal?: AbortSignal;
}

export interface ChatResponse {
  message: { content: string | null; toolCalls: ToolCall[] };
  usage: Usage;
  finishReason?: string;
}

export interface Model {
  /** The string that names it: `openai:gpt-4o-mini`, `ollama:llama3.1`, `scripted:overclaimer`. */
  readonly id: string;
  chat(request: ChatRequest): Promise<ChatResponse>;
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
