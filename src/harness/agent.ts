import { OWN_CODE, type Agent } from '../core/agent.ts';
import { BUILT_IN_AGENT } from '../core/run.ts';
import { resolveLayers, type LayerSpec } from '../layers/index.ts';
import { runHarness } from './run.ts';

/**
 * harness-eval's own harness as an agent: the loop with `layers`, calling the run's model
 * directly. Layers are checked here, so a bad name fails before any page opens.
 */
export function builtInHarness(layers: readonly LayerSpec[]): Agent {
  const resolved = resolveLayers(layers);
  return {
    name: BUILT_IN_AGENT,
    condition: {},
    layers: resolved.map((layer) => layer.name),
    // No code of the agent under test runs: the model acts only through harness-eval's tools, on the test's browser.
    containment: (_site, browser) => (browser.contained ? { contained: true, reason: `${OWN_CODE.reason}; ${browser.reason}` } : { contained: false, reason: `not contained: ${OWN_CODE.reason}, but ${browser.reason}` }),
    run: (run) =>
      runHarness({
        task: run.task.prompt,
        model: run.model,
        layers: resolved,
        outputDir: run.outputDir,
        openSession: run.openSession,
        credentials: run.site.account,
        site: run.site,
        secrets: () => run.secrets,
        maxIterations: run.maxIterations,
        onIteration: run.onIteration,
        signal: run.signal,
        carried: run.carried,
        postconditions: () => run.postconditions,
        taskId: { name: run.task.name, revision: run.task.revision },
        modelWaits: run.modelWaits,
      }),
  };
}
