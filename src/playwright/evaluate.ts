import type { BrowserContext } from '@playwright/test';
import { judge, type Judgement } from '../eval/oracle.ts';
import type { Task } from '../eval/tasks.ts';
import { runHarness, type BrowserSession, type HarnessOptions, type RunResult } from '../harness/run.ts';
import type { Model } from '../models/types.ts';
import { openCassette, type CassetteOptions } from '../models/cassette.ts';
import { createModel, modelSecrets, type ModelSpec } from '../models/registry.ts';
import { resolveLayers, type LayerSpec } from '../layers/index.ts';
import type { Site, SiteIdle } from '../sites/site.ts';

export interface EvaluateOptions {
  /** The test's own browser context: the first attempt runs in it, so Playwright's trace shows it. */
  context: BrowserContext;
  site: Site;
  model: ModelSpec | Model;
  layers: readonly LayerSpec[];
  task: Task;
  maxIterations?: HarnessOptions['maxIterations'];
  onIteration?: HarnessOptions['onIteration'];
  /** Record the model's traffic (openai:, ollama:) as a cassette, or replay it; a replay miss fails with a ReplayMissError. */
  modelCache?: Omit<CassetteOptions, 'model' | 'secrets'>;
}

/** A run as the report sees it: what the harness claimed and what the oracle found. */
export interface RunRecord extends RunResult {
  site: string;
  actual: boolean;
  falseSuccess: boolean;
  falseFailure: boolean;
  sideEffects: Judgement['sideEffects'];
  /** Cut short (the test's time ran out, the browser died): judged on the state it left. */
  incomplete: boolean;
  judged: boolean;
  verdicts: Judgement['verdicts'];
  /** The wait before the end snapshot: `settled` false when the site still owed answers at its bound, so the end state may miss them. */
  siteIdle: SiteIdle;
}

/**
 * One harness run, judged: the site's ground truth before, the run, the ground truth after, and
 * the oracle's verdict. Bad model or layer names fail here, before any page opens.
 */
export async function evaluateHarness({ context, site, model, layers, task, maxIterations, onIteration, modelCache }: EvaluateOptions): Promise<RunRecord> {
  // Opened for any model; only openai: and ollama: models send their traffic through it.
  const secrets = modelSecrets();
  const cassette = modelCache && openCassette({ ...modelCache, model: typeof model === 'string' ? model : model.id, secrets: [...secrets, site.account.password] });
  const resolvedModel = typeof model === 'object' && 'chat' in model ? model : createModel(model, process.env, cassette);
  const resolvedLayers = resolveLayers(layers);
  await site.attach(context);
  // The site is put back (the live site unvotes what the run voted) however the run ends.
  try {
    const start = await site.snapshot();

    const openSession = async (attempt: number): Promise<BrowserSession> => {
      if (attempt === 1) {
        const page = await context.newPage();
        return { page, close: async () => {} };
      }
      // Later attempts start clean: a fresh context with no cookies, on the same site state.
      const fresh = await context.browser()!.newContext();
      await site.attach(fresh);
      return { page: await fresh.newPage(), close: () => fresh.close() };
    };

    const result = await runHarness({
      task: task.prompt,
      model: resolvedModel,
      layers: resolvedLayers,
      openSession,
      credentials: site.account,
      siteFetch: (request) => site.fetch(request),
      secrets,
      maxIterations,
      onIteration,
    });
    // A stale or corrupt cassette is not the model's failure: the test fails instead of reporting a run.
    if (cassette?.failure) throw cassette.failure;
    // Judged once the site has answered every request the run started (a vote still on its way counts).
    const siteIdle = await site.idle();
    const end = await site.snapshot();
    const judgement = judge(task.postconditions, { start, end, diff: site.diff(start, end), user: site.account.username });
    return {
      ...result,
      site: site.name,
      actual: judgement.actual,
      falseSuccess: result.claimed && !judgement.actual,
      falseFailure: judgement.actual && !result.claimed,
      sideEffects: judgement.sideEffects,
      incomplete: result.stopReason === 'timeout' || result.stopReason === 'error',
      judged: true,
      verdicts: judgement.verdicts,
      siteIdle,
    };
  } finally {
    await site.dispose?.();
  }
}
