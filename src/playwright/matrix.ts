import type { Project } from '@playwright/test';
import type { LayerSpec } from '../layers/index.ts';
import { modelId, type ModelSpec } from '../models/registry.ts';
import type { SiteFactory } from '../sites/hn/site.ts';
import { stackName, type HarnessOptions } from './fixtures.ts';

export interface MatrixOptions {
  models: readonly ModelSpec[];
  /** Layer stacks, named (`{ bare: [], verified: ['guardrails', 'verify'] }`) or not. */
  layers: Record<string, readonly LayerSpec[]> | ReadonlyArray<readonly LayerSpec[]>;
  /** Sites, named or not; by default the site option's own default (the recorded HN). */
  sites?: Record<string, SiteFactory> | readonly SiteFactory[];
  /** Anything else every project shares (testDir, testMatch, timeout, use). */
  project?: Project<HarnessOptions>;
}

/**
 * Playwright projects, one per cell: `model · layer-stack` (`· site` when there are several).
 * `--repeat-each N` gives N trials per cell.
 */
export function matrix({ models, layers, sites, project = {} }: MatrixOptions): Project<HarnessOptions>[] {
  const stacks = Array.isArray(layers)
    ? (layers as ReadonlyArray<readonly LayerSpec[]>).map((stack) => [stackName(stack), stack] as const)
    : Object.entries(layers as Record<string, readonly LayerSpec[]>);
  const siteList: Array<SiteFactory | undefined> = sites === undefined
    ? [undefined]
    : Array.isArray(sites)
      ? [...(sites as readonly SiteFactory[])]
      : Object.entries(sites as Record<string, SiteFactory>).map(([name, site]) => ({ ...site, name }));
  return models.flatMap((model) =>
    stacks.flatMap(([stack, stackLayers]) =>
      siteList.map((site) => ({
        ...project,
        name: [modelId(model), stack, ...(siteList.length > 1 && site ? [site.name] : [])].join(' · '),
        use: { ...project.use, model, layers: stackLayers, layerStack: stack, ...(site && { site }) },
      })),
    ),
  );
}
