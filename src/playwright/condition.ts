import { isDeepStrictEqual } from 'node:util';
import type { Agent } from '../core/agent.ts';
import { resolveLayers, type LayerSpec } from '../layers/index.ts';
import { withoutLimits, type ModelSpec } from '../models/registry.ts';

/** A layer as it ran: its name and its options, every default applied. */
export interface LayerCondition {
  name: string;
  options?: unknown;
}

/** The layers column of an agent other than the built-in harness: it runs its own harness, not harness-eval's layers. */
export const NO_LAYERS = '-';

/** The agent as data: its name and what it is (a command's argv, a function's name). */
export function agentCondition(agent: Agent): Record<string, unknown> {
  return { name: agent.name, ...agent.condition };
}

/** The model as data, one shape however it was written: `'openai:x'` and `{ id: 'openai:x' }` are one condition. */
export function modelCondition(model: ModelSpec): Exclude<ModelSpec, string> {
  return typeof model === 'string' ? { id: model } : withoutLimits(model);
}

/** Each layer of the stack with its options, in order: one shape whether it was named (`'verify'`) or written as a value (`verify()`). */
export function layersCondition(layers: readonly LayerSpec[]): LayerCondition[] {
  return resolveLayers(layers).map(({ name, options }) => ({ name, options }));
}

export function stackName(layers: readonly LayerSpec[]): string {
  return nameOf(layersCondition(layers));
}

/** A stack's default name: its layers' names joined with `+`, or `bare`. */
function nameOf(layers: readonly LayerCondition[]): string {
  return layers.length === 0 ? 'bare' : layers.map((layer) => layer.name).join('+');
}

/**
 * The stack's name in reports, from the layers as they run (`layersCondition`). A project's `layerStack` names the project's layers only: a spec
 * that puts other layers in use under that project (`test.use({ layers })`) ran another stack,
 * which is named by its layers. A name set beside the layers, in the spec, names them.
 */
export function stackNameInUse(layers: readonly LayerCondition[], layerStack: string | undefined, project: { layers?: unknown; layerStack?: unknown }): string {
  const projectsName = layerStack !== undefined && layerStack === project.layerStack;
  const projectsLayers = () => layersCondition((project.layers ?? []) as readonly LayerSpec[]);
  if (layerStack === undefined || (projectsName && !isDeepStrictEqual(layers, projectsLayers()))) return nameOf(layers);
  return layerStack;
}
