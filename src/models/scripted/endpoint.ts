import type { RequestHandler } from 'msw';
import { InputError } from '../../input.ts';
import { handlersFetch, type Msw } from '../handlers-fetch.ts';
import { FIXED_IMAGE_TOKENS } from '../images.ts';

/** Where the doubles answer: an OpenAI-compatible endpoint that exists only as msw handlers. */
export const SCRIPTED_BASE_URL = 'https://scripted.harness-eval.invalid/v1';

/** The OpenAI wire format the doubles receive, read back into what the agent did and was told. */
export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Text, or content parts (a user message with images: its text parts are read). */
  content?: string | null | Array<{ type: string; text?: string }>;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** A tool as the chat request offers it (OpenAI's `tools[]`). */
export interface OfferedTool {
  type?: string;
  function: { name: string; description?: string; parameters?: { properties?: Record<string, { type?: string | string[] }>; required?: string[] } };
}

/**
 * A scripted double: a deterministic stand-in for a model (a site kit's: they know its pages). From
 * the conversation so far and the tools offered, it answers its next tool call, or text, which ends
 * the agent's turn (an agent whose finishing tool does not end its loop, as a CLI's does not); a
 * throw says it cannot act with these tools.
 */
export type ScriptedDouble = (messages: readonly WireMessage[], tools: readonly OfferedTool[] | undefined) => { name: string; args: Record<string, unknown> } | { text: string };

/** The doubles `scripted:<name>` resolves to, as the shell registered them. */
const registered = new Map<string, ScriptedDouble>();

/** Makes doubles callable as `scripted:<name>`; a name already taken by another double is an error. */
export function registerDoubles(doubles: Readonly<Record<string, ScriptedDouble>>): void {
  for (const [name, double] of Object.entries(doubles)) {
    const taken = registered.get(name);
    if (taken && taken !== double) throw new InputError(`scripted double "${name}" is registered already`);
    registered.set(name, double);
  }
}

/** The names of the registered doubles. */
export function doubleNames(): string[] {
  return [...registered.keys()];
}

/**
 * A rough, deterministic token count (4 characters a token) for the doubles' usage figures. An image
 * costs the fixed estimate of a model that is not OpenAI's, not the length of its base64.
 */
function tokens(value: unknown): number {
  let images = 0;
  const text = JSON.stringify(value, (_key, part: unknown) => (isImagePart(part) ? ((images += 1), undefined) : part));
  return Math.ceil(text.length / 4) + images * FIXED_IMAGE_TOKENS;
}

const isImagePart = (part: unknown) => typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'image_url';

const scriptedHandlers = ({ http, HttpResponse }: Msw): RequestHandler[] => [
  http.post(`${SCRIPTED_BASE_URL}/chat/completions`, async ({ request }) => {
    const body = (await request.json()) as { model: string; messages: WireMessage[]; tools?: OfferedTool[] };
    const double = registered.get(body.model);
    if (!double) {
      return HttpResponse.json(
        { error: { message: `The model \`${body.model}\` does not exist`, type: 'invalid_request_error', code: 'model_not_found' } },
        { status: 404 },
      );
    }
    const turn = body.messages.filter((message) => message.role === 'assistant').length + 1;
    let action;
    try {
      action = double(body.messages, body.tools);
    } catch (error) {
      // The double cannot act with this agent's tools: a failure of the doubles, said plainly.
      const message = `scripted:${body.model}: ${error instanceof Error ? error.message : String(error)}`;
      return HttpResponse.json({ error: { message, type: 'invalid_request_error', code: 'unusable_tools' } }, { status: 400 });
    }
    const toolCalls = 'text' in action ? undefined : [{ id: `call_${turn}_0`, type: 'function', function: { name: action.name, arguments: JSON.stringify(action.args) } }];
    const message = 'text' in action ? { role: 'assistant', content: action.text } : { role: 'assistant', content: null, tool_calls: toolCalls };
    const completion = tokens(toolCalls ?? message.content);
    return HttpResponse.json({
      id: `chatcmpl-scripted-${turn}`,
      object: 'chat.completion',
      created: 0,
      model: body.model,
      choices: [{ index: 0, finish_reason: toolCalls ? 'tool_calls' : 'stop', message }],
      usage: { prompt_tokens: tokens(body.messages), completion_tokens: completion, total_tokens: tokens(body.messages) + completion },
    });
  }),
];

/** A fetch for the OpenAI SDK that msw answers in-process from the handlers above. */
export const scriptedFetch = handlersFetch(scriptedHandlers, 'scripted endpoint');
