import { upvoteFirstPost } from '../src/eval/tasks.ts';
import { resolveLayers } from '../src/layers/index.ts';
import { createModel } from '../src/models/registry.ts';
import { evaluateHarness } from '../src/playwright/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { expect, test } from './support.ts';

const cases: Array<[string, () => unknown, RegExp]> = [
  ['an unknown layer', () => resolveLayers(['guardrails', 'telepathy' as never]), /^layers\[1\]: unknown layer "telepathy" \(accepted: guardrails, context, verify, login, retry, durable, stall, permissions, approval, observations, evidence, budget, checkpoint, settle, output, code-mode\)$/],
  ['a layer given as something else', () => resolveLayers([[42, {}] as never]), /^layers\[0\]: 0: Invalid input: expected string, received number$/],
  ['a bad layer option value', () => resolveLayers([['guardrails', { maxIterations: 0 }]]), /^layer guardrails: maxIterations: Too small/],
  ['an unknown layer option', () => resolveLayers([['retry', { tries: 3 }]]), /^layer retry: \(options\): Unrecognized key: "tries"$/],
  ['a model with no scheme', () => createModel('gpt-4o'), /^model: "gpt-4o" is not scheme:name \(accepted schemes: openai, ollama, scripted\)$/],
  ['an unknown model scheme', () => createModel('anthropic:claude'), /^model: unknown scheme "anthropic" in "anthropic:claude" \(accepted: openai, ollama, scripted\)$/],
  ['an unknown scripted double', () => createModel('scripted:genius'), /^model scripted:genius: unknown scripted double "genius" \(accepted: overclaimer, diligent, looper, injectable, iterator, programmer\)$/],
  ['a missing API key', () => createModel('openai:gpt-4o-mini', {}), /^model openai:gpt-4o-mini: OPENAI_API_KEY is not set/],
  ['a bad sampling option', () => createModel({ id: 'ollama:llama3.1', temperature: 9 }), /^model: temperature: Too big/],
];

for (const [what, build, message] of cases) {
  test(`${what} is a one-line error naming the field`, () => {
    expect(build).toThrow(message);
  });
}

test('bad input fails before any page opens', async ({ context }) => {
  await expect(evaluateHarness({ context, site: recordedHn(), model: 'scripted:nobody', layers: [], task: upvoteFirstPost })).rejects.toThrow(/unknown scripted double/);
  await expect(evaluateHarness({ context, site: recordedHn(), model: 'scripted:looper', layers: ['nope' as never], task: upvoteFirstPost })).rejects.toThrow(/unknown layer/);
  expect(context.pages()).toHaveLength(0);
});
