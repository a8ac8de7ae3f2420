import { expect, test } from '@playwright/test';
import OpenAI, { BadRequestError } from 'openai';
import type { ResponseCreateParamsNonStreaming, ResponseInputItem, ResponseStreamEvent, Tool } from 'openai/resources/responses/responses';
import type { Gateway } from '../src/agents/gateway.ts';
import { calling, FRONT_PAGE, gatewayStarter, recording, task, types } from './gateway-doubles.ts';

/** The gateway's OpenAI Responses API as Codex CLI speaks it: namespace and custom tools, additional_tools, hosted tools; with the official `openai` SDK as the client. */

const start = gatewayStarter();

function client(gateway: Gateway) {
  return new OpenAI({ baseURL: gateway.endpoint.baseURL, apiKey: gateway.endpoint.apiKey, maxRetries: 0 });
}

const URL_SCHEMA = { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] };
const PATCH = '*** Begin Patch\n*** End Patch';
const GRAMMAR = 'start: "*** Begin Patch" LF "*** End Patch"';

/** Codex's tools: a function, a custom (grammar) tool, its MCP server's tools under a namespace, and a hosted web search that reaches nothing. */
const codexTools = [
  { type: 'function', name: 'shell', description: 'Runs a command.', parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } }, strict: false },
  { type: 'custom', name: 'apply_patch', description: 'Edits files.', format: { type: 'grammar', syntax: 'lark', definition: GRAMMAR } },
  { type: 'namespace', name: 'mcp__playwright__', description: 'The run’s browser.', tools: [{ type: 'function', name: 'browser_navigate', description: 'Opens a URL.', parameters: URL_SCHEMA }] },
  { type: 'web_search', external_web_access: false },
] as unknown as Tool[];

/** Codex's request: its instructions, a developer message, the task, a tool offered by an additional_tools item, and the fields it always sends. */
const codexRequest = {
  model: 'gpt-5-codex',
  instructions: 'You are Codex.',
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Approvals: never.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: task }] },
    { type: 'additional_tools', role: 'developer', tools: [{ type: 'function', name: 'view_image', description: 'Shows an image.', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false }] },
  ],
  tools: codexTools,
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: { effort: 'medium', summary: 'auto' },
  store: false,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: 'session-1',
  text: { verbosity: 'low' },
} as unknown as ResponseCreateParamsNonStreaming;

/** A model that calls the namespace's tool and the custom one, by the names the model is given. */
const codexModel = () => recording(calling({ name: 'mcp__playwright__browser_navigate', arguments: JSON.stringify(FRONT_PAGE) }, { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) }));

/** The calls as Codex reads them: the namespace and the name apart, a custom tool's call with its input text. */
const CODEX_CALLS = [
  { type: 'function_call', call_id: 'call_0', namespace: 'mcp__playwright__', name: 'browser_navigate', arguments: JSON.stringify(FRONT_PAGE), status: 'completed' },
  { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: PATCH, status: 'completed' },
];

test('Codex\'s request: namespace tools flattened for the model and split back in its calls, a custom tool called with its input text, additional_tools offered, reasoning and include taken; the hosted web_search is dropped, noted once', async () => {
  const seen = codexModel();
  const { gateway, events } = await start(seen.model);
  const openai = client(gateway);
  const answer = await openai.responses.create(codexRequest);
  expect(answer.output).toEqual(CODEX_CALLS.map((call) => ({ ...call, id: expect.any(String) })));

  const [given] = seen.requests;
  expect(given!.messages).toEqual([
    { role: 'system', content: 'You are Codex.' },
    { role: 'system', content: 'Approvals: never.' },
    { role: 'user', content: task },
  ]);
  expect(given!.tools.map((tool) => tool.name)).toEqual(['shell', 'apply_patch', 'mcp__playwright__browser_navigate', 'view_image']);
  expect(given!.tools[1]!.parameters).toEqual({ type: 'object', properties: { input: { type: 'string', description: `Text in this lark grammar:\n${GRAMMAR}` } }, required: ['input'] });
  expect(given!.tools[2]).toEqual({ name: 'mcp__playwright__browser_navigate', description: 'Opens a URL.', parameters: URL_SCHEMA });

  // Streamed, as Codex asks: the custom tool's input comes as its own events; the completed response holds the same calls.
  const streamed: ResponseStreamEvent[] = [];
  for await (const event of await openai.responses.create({ ...codexRequest, stream: true })) streamed.push(event);
  expect(streamed.map((event) => event.type)).toEqual([
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.custom_tool_call_input.delta',
    'response.custom_tool_call_input.done',
    'response.output_item.done',
    'response.completed',
  ]);
  expect(streamed.at(-1)).toMatchObject({ response: { output: CODEX_CALLS } });
  expect((await openai.responses.stream(codexRequest as Parameters<typeof openai.responses.stream>[0]).finalResponse()).output).toMatchObject(CODEX_CALLS);

  expect(types(events).filter((type) => type === 'harness_note')).toHaveLength(1);
  expect(events[0]).toEqual({ type: 'harness_note', layer: 'gateway', message: expect.stringContaining('web_search') });
});

test('handed back: a namespaced call reads as the model\'s flat name, a custom tool call as its input, their outputs as tool results; an output\'s image goes to the model once the turn\'s outputs are in', async () => {
  const seen = codexModel();
  const { gateway } = await start(seen.model);
  const png = 'iVBORw0KGgo=';
  const input: ResponseInputItem[] = [
    ...(codexRequest.input as ResponseInputItem[]),
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'ZW5j' },
    { type: 'function_call', call_id: 'call_0', namespace: 'mcp__playwright__', name: 'browser_navigate', arguments: JSON.stringify(FRONT_PAGE) },
    { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: PATCH },
    { type: 'function_call_output', call_id: 'call_0', output: [{ type: 'input_text', text: 'Opened.' }, { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' }] },
    { type: 'custom_tool_call_output', call_id: 'call_1', output: 'Done.' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Both done.', annotations: [] }] },
  ] as ResponseInputItem[];
  await client(gateway).responses.create({ ...codexRequest, input });
  expect(seen.requests[0]!.messages.slice(3)).toEqual([
    {
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'call_0', name: 'mcp__playwright__browser_navigate', arguments: JSON.stringify(FRONT_PAGE) },
        { id: 'call_1', name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
      ],
    },
    { role: 'tool', toolCallId: 'call_0', name: 'mcp__playwright__browser_navigate', content: 'Opened.\n[image: image/png, 8 bytes]' },
    { role: 'tool', toolCallId: 'call_1', name: 'apply_patch', content: 'Done.' },
    { role: 'user', content: '[the images of the tool results above]', images: [{ mimeType: 'image/png', data: png }] },
    { role: 'assistant', content: 'Both done.' },
  ]);
});

test('what the gateway still cannot translate is a 400 naming the field, traced as model_request_refused, and no call', async () => {
  const { gateway, events } = await start(codexModel().model);
  const openai = client(gateway);
  const refused = await openai.responses.create({ ...codexRequest, input: [{ type: 'item_reference', id: 'msg_1' }] }).catch((error: unknown) => error);
  const message = 'responses request: input.0.type: "item_reference" is not served here (message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, additional_tools and reasoning items are)';
  expect(refused).toBeInstanceOf(BadRequestError);
  expect((refused as BadRequestError).error).toMatchObject({ message });
  expect(events).toEqual([{ type: 'model_request_refused', status: 400, message }]);
});
