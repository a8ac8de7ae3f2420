import { http, HttpResponse } from 'msw';
import { handlersFetch } from '../handlers-fetch.ts';
import { FIXED_IMAGE_TOKENS } from '../images.ts';
import { doubles } from './doubles.ts';
import { readHistory, type WireMessage } from './history.ts';
import { callFor } from './calls.ts';
import type { OfferedTool } from './toolbox.ts';

/** Where the doubles answer: an OpenAI-compatible endpoint that exists only as msw handlers. */
export const SCRIPTED_BASE_URL = 'https://scripted.harness-eval.invalid/v1';

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

export const scriptedHandlers = [
  http.post(`${SCRIPTED_BASE_URL}/chat/completions`, async ({ request }) => {
    const body = (await request.json()) as { model: string; messages: WireMessage[]; tools?: OfferedTool[] };
    const policy = doubles[body.model];
    if (!policy) {
      return HttpResponse.json(
        { error: { message: `The model \`${body.model}\` does not exist`, type: 'invalid_request_error', code: 'model_not_found' } },
        { status: 404 },
      );
    }
    const history = readHistory(body.messages, body.tools);
    let action;
    try {
      action = callFor(policy(history), history);
    } catch (error) {
      // The double cannot act with this agent's tools: a failure of the doubles, said plainly.
      const message = `scripted:${body.model}: ${error instanceof Error ? error.message : String(error)}`;
      return HttpResponse.json({ error: { message, type: 'invalid_request_error', code: 'unusable_tools' } }, { status: 400 });
    }
    const toolCalls = [
      { id: `call_${history.turns + 1}_0`, type: 'function', function: { name: action.name, arguments: JSON.stringify(action.args) } },
    ];
    return HttpResponse.json({
      id: `chatcmpl-scripted-${history.turns + 1}`,
      object: 'chat.completion',
      created: 0,
      model: body.model,
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: toolCalls } }],
      usage: { prompt_tokens: tokens(body.messages), completion_tokens: tokens(toolCalls), total_tokens: tokens(body.messages) + tokens(toolCalls) },
    });
  }),
];

/** A fetch for the OpenAI SDK that msw answers in-process from the handlers above. */
export const scriptedFetch = handlersFetch(scriptedHandlers, 'scripted endpoint');
