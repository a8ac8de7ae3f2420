import type { CellOptions } from 'harness-eval';

/**
 * The matrix, for the config and the spec both: HARNESS_MODELS (comma-separated; by default two
 * offline doubles, so the workflow runs before any key is set) × two layer stacks.
 */
export const nightlyCells: CellOptions = {
  models: (process.env.HARNESS_MODELS || 'scripted:overclaimer,scripted:diligent').split(',').map((model) => model.trim()).filter(Boolean),
  layers: { bare: [], verified: ['guardrails', 'verify', 'login'] },
};
