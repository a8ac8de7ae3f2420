import type { ChatResponse as OllamaChatResponse, Message as OllamaMessage, Tool as OllamaTool, ToolCall as OllamaToolCall } from 'ollama';
import { z } from 'zod';
import { parseJsonObject } from '../text.ts';
import { ModelError, readUsage } from './types.ts';
import type { ChatMessage, ChatResponse, ToolCall, ToolSchema } from '../core/model.ts';
import { fromWireTools, wireToolSchema } from './wire-openai.ts';
import { assistantTurn, callLedger, toolCallId } from './wire.ts';

/**
 * Ollama's /api/chat wire format, both ways: the `ollama:` provider speaks it to a server, the
 * model gateway hears it from an agent. Ollama has no tool-call ids and takes arguments as objects.
 */

export function toOllamaMessage(message: ChatMessage): OllamaMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      // Ollama takes a message's images as bare base64, beside its text.
      return { role: 'user', content: message.content, ...(message.images?.length && { images: message.images.map((image) => image.data) }) };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content ?? '',
        ...(message.toolCalls?.length && { tool_calls: message.toolCalls.map(toOllamaToolCall) }),
      };
    case 'tool':
      return { role: 'tool', content: message.content, tool_name: message.name };
  }
}

/** Ollama wants an object: arguments the model got wrong go as {}. */
function toOllamaToolCall(call: ToolCall): OllamaToolCall {
  return { function: { name: call.name, arguments: parseJsonObject(call.arguments) ?? {} } };
}

export function toOllamaTool(tool: ToolSchema): OllamaTool {
  return {
    type: 'function',
    // The SDK's parameters type is a narrow slice of JSON Schema; Ollama takes any.
    function: { name: tool.name, description: tool.description, parameters: tool.parameters as OllamaTool['function']['parameters'] },
  };
}

export function fromOllamaResponse(response: OllamaChatResponse, turn: number): ChatResponse {
  const message = response?.message;
  if (!message) throw new ModelError('bad_response', 'ollama: the response has no message');
  const toolCalls = (message.tool_calls ?? []).map((call, index) => ({
    id: toolCallId(turn, index),
    name: call.function.name,
    arguments: JSON.stringify(call.function.arguments ?? {}),
  }));
  return {
    // Ollama answers "" where OpenAI answers null: no text besides the tool calls.
    message: { content: message.content || null, toolCalls },
    usage: readUsage({ input: ['prompt_eval_count', response.prompt_eval_count], output: ['eval_count', response.eval_count] }),
    finishReason: response.done_reason,
  };
}

// An agent's request, as the gateway reads it: unknown fields (options, format, keep_alive, …) are dropped.

const ollamaMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().nullish(),
  tool_calls: z.array(z.object({ function: z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()) }) })).nullish(),
  tool_name: z.string().nullish(),
  // Images have no place in a text model's run: refused rather than silently dropped.
  images: z.array(z.unknown()).max(0, 'images are not supported').nullish(),
});

export const ollamaChatRequestSchema = z.object({
  messages: z.array(ollamaMessageSchema).min(1, 'must hold at least one message'),
  tools: z.array(wireToolSchema).nullish(),
  stream: z.boolean().nullish(),
});
export type OllamaChatRequest = z.output<typeof ollamaChatRequestSchema>;

/**
 * The request as ChatMessages. Ollama has no tool-call ids: calls get the ids `fromOllamaResponse`
 * gives them, and a tool message answers its turn's first unanswered call of its `tool_name` (or
 * the first unanswered call, when it names none).
 */
export function fromOllamaRequest(request: OllamaChatRequest): { messages: ChatMessage[]; tools: ToolSchema[] } {
  const calls = callLedger();
  const messages = request.messages.map((message, position): ChatMessage => {
    const content = message.content ?? '';
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, content };
      case 'assistant':
        return assistantTurn(content, calls.made((message.tool_calls ?? []).map((call) => ({ name: call.function.name, arguments: JSON.stringify(call.function.arguments) }))));
      case 'tool':
        return { role: 'tool', ...calls.answer({ name: message.tool_name }, position), content };
    }
  });
  return { messages, tools: fromWireTools(request.tools) };
}

/** The answer as Ollama's /api/chat writes its last (done) message; a count the model did not give is left out. */
export function toOllamaResponse(response: ChatResponse, model: string) {
  const { input, output } = response.usage;
  const toolCalls = response.message.toolCalls.map(toOllamaToolCall);
  return {
    model,
    created_at: new Date().toISOString(),
    message: { role: 'assistant' as const, content: response.message.content ?? '', ...(toolCalls.length > 0 && { tool_calls: toolCalls }) },
    done: true,
    done_reason: response.finishReason === 'length' ? 'length' : 'stop',
    ...(input !== null && { prompt_eval_count: input }),
    ...(output !== null && { eval_count: output }),
  };
}
