import type { ChatMessage, ToolSchema } from '../core/model.ts';
import type { TraceEvent } from '../core/trace.ts';

/** Counts one message's prompt tokens for a given model. */
export type MessageCounter = (message: ChatMessage) => number;

/** Role, separators and the tool name or call id around each message's text (OpenAI's rule of thumb is 3–4). */
const MESSAGE_OVERHEAD = 4;
/** The tokens that open the model's reply, counted once per prompt. */
const REPLY_PRIMING = 3;
/** For the context window of a model the table does not know: small, so trimming starts early rather than too late. */
export const DEFAULT_CONTEXT_WINDOW = 8_192;

/** Context windows (tokens) by model-name prefix, without the provider; the longest matching prefix wins. */
const CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  'gpt-5': 400_000,
  'gpt-4.1': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4-turbo': 128_000,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 16_385,
  o1: 200_000,
  'o1-mini': 128_000,
  o3: 200_000,
  'o4-mini': 200_000,
  'llama3.1': 128_000,
  'llama3.2': 128_000,
  'llama3.3': 128_000,
  llama3: 8_192,
  'qwen2.5': 32_768,
  qwen3: 40_960,
  mistral: 32_768,
  gemma2: 8_192,
  gemma3: 128_000,
};

/** The context window of `openai:gpt-4o-mini`, `ollama:llama3.1:8b`, …; DEFAULT_CONTEXT_WINDOW when unknown. */
export function contextWindow(modelId: string): number {
  const name = modelId.slice(modelId.indexOf(':') + 1);
  const prefix = Object.keys(CONTEXT_WINDOWS)
    .filter((known) => name === known || name.startsWith(`${known}-`) || name.startsWith(`${known}:`))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? DEFAULT_CONTEXT_WINDOW : CONTEXT_WINDOWS[prefix]!;
}

/**
 * The model's own tokenizer for OpenAI models (o200k_base for the gpt-4o, gpt-4.1, gpt-5 and o
 * families, cl100k_base for older ones), characters ÷ 4 for every other provider, whose tokenizers
 * are not published as JavaScript. The encodings load on first use: they take a few hundred ms.
 */
export async function messageCounter(modelId: string): Promise<MessageCounter> {
  const openai = /^openai:(.+)$/.exec(modelId)?.[1];
  const countText = openai === undefined ? (text: string) => Math.ceil(text.length / 4) : await textCounter(openai);
  return (message) => MESSAGE_OVERHEAD + countText(messageText(message));
}

/** The tokens of a whole prompt: its messages and the reply's priming. */
export function promptTokens(messages: readonly ChatMessage[], count: MessageCounter): number {
  return messages.reduce((total, message) => total + count(message), REPLY_PRIMING);
}

/**
 * The most tokens a prompt can be, counted at no cost: a token a byte of its text and of its tools'
 * schemas (no tokenizer makes a token of less than a byte, and counting bytes takes no time, where a
 * tokenizer takes seconds on hostile text), `perImage` an image, and the overheads.
 */
export function promptBound(messages: readonly ChatMessage[], tools: readonly ToolSchema[], perImage: number): number {
  const images = (message: ChatMessage) => (message.role === 'user' ? (message.images?.length ?? 0) : 0);
  const text = messages.reduce((total, message) => total + MESSAGE_OVERHEAD + Buffer.byteLength(messageText(message)) + images(message) * perImage, REPLY_PRIMING);
  return tools.reduce((total, tool) => total + Buffer.byteLength(JSON.stringify(tool)), text);
}

/** Counts a text's tokens with an OpenAI model's encoding (`gpt-4o`: o200k_base); special tokens' text counts as text. */
export async function textCounter(openaiModel: string): Promise<(text: string) => number> {
  const { countTokens } = await encodingFor(openaiModel);
  return (text) => countTokens(text, { disallowedSpecial: new Set() });
}

function encodingFor(name: string) {
  return /^(gpt-4o|gpt-4\.1|gpt-5|o\d)/.test(name) ? import('gpt-tokenizer/encoding/o200k_base') : import('gpt-tokenizer/encoding/cl100k_base');
}

/** What a message puts in the prompt: its text, and for tool calls their names and arguments. */
function messageText(message: ChatMessage): string {
  const calls = message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => `${call.name}${call.arguments}`) : [];
  return [message.content ?? '', ...calls].join('\n');
}

/** Tools whose results are not page content: their tokens are not the text tools'. */
const NOT_TEXT_TOOLS = new Set(['screenshot', 'view_screenshot', 'finish']);

/**
 * What a run's observations cost the model, in prompt tokens: the screenshots it was sent (their
 * estimates, `harness_image`) against the text tools' outputs (every other tool result's JSON,
 * counted with o200k_base, gpt-4o's tokenizer, as one yardstick whatever the model). An agent of
 * its own's calls (a command agent's, over MCP) are not counted: what its model was shown of them
 * is the agent's to choose.
 */
export async function observationTokens(trace: readonly TraceEvent[]): Promise<{ screenshots: number; text: number }> {
  const countTokens = await textCounter('gpt-4o');
  const agents = new Set(trace.flatMap((event) => (event.type === 'tool_call' && event.by === 'agent' ? [event.callId] : [])));
  let screenshots = 0;
  let text = 0;
  for (const event of trace) {
    if (event.type === 'harness_image') screenshots += event.tokens;
    if (event.type === 'tool_result' && event.ok && !NOT_TEXT_TOOLS.has(event.name) && !agents.has(event.callId)) text += countTokens(JSON.stringify(event.output));
  }
  return { screenshots, text };
}
