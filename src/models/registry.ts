import { z } from 'zod';
import { InputError, parseInput } from '../input.ts';
import type { Cassette, ModelCacheMode } from './cassette.ts';
import { ollamaModel } from './ollama.ts';
import { openaiModel } from './openai.ts';
import { doubleNames, SCRIPTED_BASE_URL, scriptedFetch } from './scripted/endpoint.ts';
import { DEFAULT_CONCURRENCY, endpointLimitsSchema, samplingSchema } from './options.ts';
import type { Model } from '../core/model.ts';

export const modelSchemes = ['openai', 'ollama', 'scripted'] as const;

const modelOptionsSchema = z
  .object({ id: z.string().min(1), timeoutMs: z.int().positive().optional(), maxRetries: z.int().min(0).max(10).optional() })
  .extend(samplingSchema.shape)
  .extend(endpointLimitsSchema.shape)
  .strict();

/** A model as specs and configs name it: `'openai:gpt-4o-mini'`, or that with sampling options. */
export type ModelSpec = string | z.input<typeof modelOptionsSchema>;

/**
 * A model spec checked, without building anything or needing a key: its options, its scheme, and
 * a scripted double's name. `matrix()` checks its models with it when the config loads.
 */
export function parseModelSpec(spec: unknown) {
  const { id, ...options } = parseInput(modelOptionsSchema, typeof spec === 'string' ? { id: spec } : spec, 'model');
  const match = /^([a-z]+):(.+)$/.exec(id);
  if (!match) throw new InputError(`model: "${id}" is not scheme:name (accepted schemes: ${modelSchemes.join(', ')})`);
  const [, scheme, name] = match as unknown as [string, string, string];
  if (!(modelSchemes as readonly string[]).includes(scheme)) {
    throw new InputError(`model: unknown scheme "${scheme}" in "${id}" (accepted: ${modelSchemes.join(', ')})`);
  }
  if (scheme === 'scripted' && !doubleNames().includes(name)) {
    throw new InputError(`model ${id}: unknown scripted double "${name}" (accepted: ${doubleNames().join(', ') || 'none registered'})`);
  }
  return { id, scheme: scheme as (typeof modelSchemes)[number], name, options };
}

/**
 * Builds the model a spec names. Checks everything before any browser starts: the scheme, the
 * double's name, the API key a real provider needs. With a cassette, openai: and ollama: models
 * record their traffic or replay it (scripted doubles are offline already and ignore it).
 */
export function createModel(spec: ModelSpec, env: NodeJS.ProcessEnv = process.env, cassette?: Cassette): Model {
  const { id, scheme, name, options } = parseModelSpec(spec);
  // A real endpoint is limited (a replayed model sends nothing anywhere, and needs no slot).
  const replay = cassette?.mode === 'replay';
  const limited = { ...options, concurrency: replay ? undefined : (options.concurrency ?? DEFAULT_CONCURRENCY) };
  switch (scheme) {
    case 'openai': {
      // A replayed model needs no key either: a placeholder stands in.
      const apiKey = replay ? 'cassette-replay' : env.OPENAI_API_KEY;
      if (!apiKey) throw new InputError(`model ${id}: OPENAI_API_KEY is not set (openai: models need it; OPENAI_BASE_URL selects any compatible server)`);
      return openaiModel(name, { apiKey, baseURL: env.OPENAI_BASE_URL || undefined, fetch: cassette?.fetch, ...limited });
    }
    case 'ollama':
      return ollamaModel(name, { host: env.OLLAMA_HOST || 'http://127.0.0.1:11434', fetch: cassette?.fetch, ...limited });
    case 'scripted': {
      // The doubles go through the real OpenAI SDK, answered in-process by msw handlers.
      const double = openaiModel(name, { apiKey: 'scripted-double', baseURL: SCRIPTED_BASE_URL, fetch: scriptedFetch, maxRetries: 0, ...options });
      return { id, chat: (request) => double.chat(request) };
    }
  }
}

/** Values that must never reach a trace or report: the API keys a run could hold. */
export function modelSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  return [env.OPENAI_API_KEY].filter((value): value is string => Boolean(value));
}

/**
 * Why a model cannot run here (no API key, no host), or undefined when it can: a matrix skips
 * such models with this reason instead of failing them. Replayed from cassettes, every model can.
 */
export function modelUnavailable(spec: ModelSpec, env: NodeJS.ProcessEnv = process.env, cacheMode: ModelCacheMode = 'off'): string | undefined {
  if (cacheMode === 'replay') return undefined;
  const id = typeof spec === 'string' ? spec : spec.id;
  if (id.startsWith('openai:') && !env.OPENAI_API_KEY) return `${id}: OPENAI_API_KEY is not set`;
  if (id.startsWith('ollama:') && !env.OLLAMA_HOST) return `${id}: OLLAMA_HOST is not set`;
  return undefined;
}

/** The spec without its endpoint limits: they change when calls are made, never what ran, so runs with other limits share a cell. */
export function withoutLimits(spec: Exclude<ModelSpec, string>): Exclude<ModelSpec, string> {
  const { concurrency: _c, rateLimitRetries: _r, maxBackoffMs: _b, ...rest } = spec;
  return rest;
}

export function modelId(spec: ModelSpec): string {
  return typeof spec === 'string' ? spec : spec.id;
}
