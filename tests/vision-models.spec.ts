import { expect, test } from '@playwright/test';
import { http, HttpResponse } from 'msw';
import { ollamaModel } from '../src/models/ollama.ts';
import { openaiModel } from '../src/models/openai.ts';
import type { ChatMessage } from '../src/models/types.ts';
import { toCompletion } from '../src/models/wire-openai.ts';
import { mswServer } from './support.ts';

const server = mswServer();

// Four bytes of a JPEG's start, base64: what an image's data looks like on the wire.
const DATA = Buffer.from([0xff, 0xd8, 0xff, 0xe0]).toString('base64');
const messages: ChatMessage[] = [
  { role: 'system', content: 'You browse.' },
  { role: 'user', content: '[image shot_1, 1280×720, 41 KB]', images: [{ mimeType: 'image/jpeg', data: DATA, detail: 'high' }] },
];

/** Answers every request at `url` with `body`, keeping what each request sent. */
function serve(url: string, body: object): unknown[] {
  const sent: unknown[] = [];
  server.use(http.post(url, async ({ request }) => (sent.push(await request.json()), HttpResponse.json(body))));
  return sent;
}

/** The messages gpt-4o's request carried, sent to a stand-in endpoint that answers a plain completion. */
async function sentToOpenAI(chat: ChatMessage[]): Promise<unknown[]> {
  const answer = toCompletion({ message: { content: 'ok', toolCalls: [] }, usage: { input: null, output: null } }, { id: 'c', created: 0, model: 'gpt-4o' });
  const sent = serve('https://api.example.test/v1/chat/completions', answer);
  await openaiModel('gpt-4o', { apiKey: 'sk-test', baseURL: 'https://api.example.test/v1' }).chat({ messages: chat, tools: [] });
  return (sent[0] as { messages: unknown[] }).messages;
}

test('OpenAI gets the image as an image_url content part, a data URL after the text', async () => {
  expect((await sentToOpenAI(messages))[1]).toEqual({
    role: 'user',
    content: [
      { type: 'text', text: '[image shot_1, 1280×720, 41 KB]' },
      { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${DATA}`, detail: 'high' } },
    ],
  });
});

test('Ollama gets the image as bare base64 in the message’s images', async () => {
  const sent = serve('http://ollama.example.test:11434/api/chat', {
    model: 'llava',
    created_at: '2025-01-01T00:00:00Z',
    message: { role: 'assistant', content: 'a page' },
    done: true,
    done_reason: 'stop',
    prompt_eval_count: 600,
    eval_count: 3,
  });
  await ollamaModel('llava', { host: 'http://ollama.example.test:11434' }).chat({ messages, tools: [] });
  expect((sent[0] as { messages: unknown[] }).messages[1]).toEqual({ role: 'user', content: '[image shot_1, 1280×720, 41 KB]', images: [DATA] });
});

test('a message without images keeps its plain string content', async () => {
  expect((await sentToOpenAI([{ role: 'user', content: 'hello' }]))[0]).toEqual({ role: 'user', content: 'hello' });
});
