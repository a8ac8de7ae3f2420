import type { LayerSpec } from './index.ts';

/**
 * The named layer stacks the matrices compare, from none to all the defences the classic task
 * needs: the names are what reports and baselines key cells by, so they stay stable.
 */
export const layerStacks = {
  bare: [],
  verified: ['guardrails', 'verify'],
  'verified+login': ['guardrails', 'verify', 'login'],
  full: ['guardrails', 'context', 'permissions', 'observations', 'login', 'verify', 'retry'],
} as const satisfies Record<string, readonly LayerSpec[]>;
