import { isDeepStrictEqual } from 'node:util';
import type { Layer } from '../harness/layer.ts';
import type { LayerSpec } from '../layers/index.ts';
import type { ModelSpec } from '../models/registry.ts';

/** A layer as it ran: its name and the options it was given (a Layer object's, when it exposes them). */
export interface LayerCondition {
  name: string;
  options?: unknown;
}

/** The model as data, one shape however it was written: `'openai:x'` and `{ id: 'openai:x' }` are one condition. */
export function modelCondition(model: ModelSpec): Exclude<ModelSpec, string> {
  return typeof model === 'string' ? { id: model } : model;
}

/** Each layer of the stack with its options, in order. */
export function layersCondition(layers: readonly LayerSpec[]): LayerCondition[] {
  return layers.map((layer) => {
    if (typeof layer === 'string') return { name: layer, options: {} };
    if (Array.isArray(layer)) return { name: layer[0], options: layer[1] ?? {} };
    const { name, options } = layer as Layer & { options?: unknown };
    return options === undefined ? { name } : { name, options };
  });
}

export function stackName(layers: readonly LayerSpec[]): string {
  if (layers.length === 0) return 'bare';
  return layersCondition(layers).map((layer) => layer.name).join('+');
}

/**
 * The stack's name in reports. A project's `layerStack` names the project's layers only: a spec
 * that puts other layers in use under that project (`test.use({ layers })`) ran another stack,
 * which is named by its layers. A name set beside the layers, in the spec, names them.
 */
export function stackNameInUse(layers: readonly LayerSpec[], layerStack: string | undefined, project: { layers?: unknown; layerStack?: unknown }): string {
  const projectsName = layerStack !== undefined && layerStack === project.layerStack;
  if (layerStack === undefined || (projectsName && !isDeepStrictEqual(layers, project.layers))) return stackName(layers);
  return layerStack;
}
