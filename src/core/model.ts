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
  mimeType: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
  /** The image's bytes, base64. */
  data: string;
  detail?: 'low' | 'high';
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
  /** Of `input`, the tokens the provider served from its prompt cache (priced apart), when it says; absent: none known. */
  cachedInput?: number;
  /** Why a count is null, in the provider's own field names. */
  problem?: string;
}

export interface ChatRequest {
  messages: readonly ChatMessage[];
  tools: readonly ToolSchema[];
  signal?: AbortSignal;
  /** Told of the time the call spends waiting on its endpoint (a slot, a Retry-After, a backoff): the run's, not the agent's. */
  waits?: ModelWaits;
  /** The answer as JSON, as a client asked (JSON mode, or a schema): the provider is asked for it in its own words. */
  responseFormat?: ResponseFormat;
  /** Sampling a client asked for (Gemini's generationConfig): the run's model spec's own settings win over it. */
  sampling?: Sampling;
}

/** JSON mode (`json`: any JSON object), or JSON that a schema describes (`schema`, JSON Schema). */
export type ResponseFormat = { type: 'json' } | { type: 'schema'; name: string; schema: Record<string, unknown> };

/** What a client may ask of the sampling; a field left out is the provider's default. */
export interface Sampling {
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: string[];
}

/**
 * A run's clock of model waits: time spent queued for an endpoint's slot or waiting out a rate
 * limit. It is recorded, and left out of the agent's own time limits. Overlapping waits (two
 * calls of one agent at once) count once.
 */
export interface ModelWaits {
  /** Marks a wait's start; the function it answers marks its end. */
  begin(): () => void;
  /** Waited so far, in ms, a wait in progress included. */
  waitedMs(): number;
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
