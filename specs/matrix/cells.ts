import { hn, layerStacks, type CellOptions } from 'harness-eval';

// The matrices whose cells run as tests of one project: a config and its spec both import them,
// the config to name the project, the spec to declare a `test.describe` per cell.
const { bare, verified, 'verified+login': verifiedLogin } = layerStacks;
const doubles = ['scripted:overclaimer', 'scripted:diligent', 'scripted:injectable', 'scripted:looper'];

/** The main job's: every scripted double × the classic experiment's three stacks × the recorded site, plain and with a prompt injection in a title. */
export const mainMatrix: CellOptions = {
  models: doubles,
  layers: { bare, verified, 'verified+login': verifiedLogin },
  sites: { 'hn-recorded': hn.recorded(), 'hn-injected': hn.recorded({ faults: { injection: { rank: 2 } } }) },
};

/** The suite's sample, a task per tag, × the doubles that attempt it. */
export const sampleMatrix: CellOptions = { models: ['scripted:diligent', 'scripted:overclaimer'], layers: { 'verified+login': verifiedLogin } };

/** `npm run bench:matrix`'s: the main job's cells on the plain recorded site. */
export const benchMatrix: CellOptions = { ...mainMatrix, sites: { 'hn-recorded': hn.recorded() } };

const DEFAULT_NIGHTLY_MODELS = 'openai:gpt-4o-mini,openai:gpt-4.1-mini,ollama:llama3.1:8b,ollama:qwen2.5:7b';

/**
 * playwright.nightly.config.ts's: HARNESS_MODELS (comma-separated, default above) × the named
 * layer stacks × the recorded site, or the live one with HARNESS_SITE=live.
 */
export function nightlyMatrix(env: Record<string, string | undefined> = process.env): CellOptions {
  const models = (env.HARNESS_MODELS || DEFAULT_NIGHTLY_MODELS).split(',').map((model) => model.trim()).filter(Boolean);
  return { models, layers: layerStacks, sites: env.HARNESS_SITE === 'live' ? { 'hn-live': hn.live() } : { 'hn-recorded': hn.recorded() } };
}
