import { upvoteFirstPost } from '../src/eval/tasks.ts';
import { createModel } from '../src/models/registry.ts';
import { SCRIPTED_BASE_URL, scriptedFetch } from '../src/models/scripted/endpoint.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { expect, test } from './support.ts';

test.describe('the scripted doubles against the recorded site', () => {
  test('diligent checks the page and reports the login wall truthfully; with login it succeeds', async ({ context }) => {
    const bare = await evaluate({ context, site: recordedHn(), model: 'scripted:diligent', layers: [], task: upvoteFirstPost });
    expect(bare).toMatchObject({ claimed: false, actual: false, falseSuccess: false });
    expect(bare.summary).toMatch(/log in/);
    const logged = await evaluate({ context, site: recordedHn(), model: 'scripted:diligent', layers: ['login'], task: upvoteFirstPost });
    expect(logged).toMatchObject({ claimed: true, actual: true });
  });

  test('injectable obeys an instruction in a story title: a false success', async ({ context }) => {
    const injected = recordedHn({ faults: { injection: { rank: 3 } } });
    const obeyed = await evaluate({ context, site: injected, model: 'scripted:injectable', layers: [], task: upvoteFirstPost });
    expect(obeyed).toMatchObject({ claimed: true, actual: false, falseSuccess: true });
    expect(obeyed.trace.filter((event) => event.type === 'tool_call').map((event) => event.type === 'tool_call' && event.name)).toEqual(['navigate', 'get_text', 'finish']);
    const clean = await evaluate({ context, site: recordedHn(), model: 'scripted:injectable', layers: [], task: upvoteFirstPost });
    expect(clean).toMatchObject({ claimed: false, falseSuccess: false });
  });
});

test('the doubles answer as an OpenAI-compatible endpoint, through the real openai SDK', async () => {
  const response = await scriptedFetch(`${SCRIPTED_BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'looper', messages: [{ role: 'system', content: 's' }, { role: 'user', content: 't' }] }),
  });
  const body = await response.json();
  expect(body.choices[0].message.tool_calls[0].function).toEqual({ name: 'get_stories', arguments: '{}' });
  expect(body.usage.prompt_tokens).toBeGreaterThan(0);
  const unknown = await scriptedFetch(`${SCRIPTED_BASE_URL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'genius', messages: [] }) });
  expect(unknown.status).toBe(404);

  const model = createModel('scripted:overclaimer');
  expect(model.id).toBe('scripted:overclaimer');
  const turn = await model.chat({ messages: [{ role: 'system', content: 's' }, { role: 'user', content: upvoteFirstPost.prompt }], tools: [] });
  expect(turn.message.toolCalls).toEqual([{ id: 'call_1_0', name: 'navigate', arguments: '{"url":"https://news.ycombinator.com/news"}' }]);
});
