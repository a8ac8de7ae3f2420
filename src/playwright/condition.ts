import { homedir, tmpdir } from 'node:os';
import { isAbsolute, relative, sep } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Agent } from '../core/agent.ts';
import { resolveLayers, type LayerSpec } from '../layers/index.ts';
import { modelId, withoutLimits, type ModelSpec } from '../models/registry.ts';

/** A layer as it ran: its name and its options, every default applied. */
export interface LayerCondition {
  name: string;
  options?: unknown;
}

/**
 * The model's name in reports: `modelName` (a `models` record's key), but a project's name names
 * the project's model only: a spec that puts another model in use (`test.use({ model })`) is filed
 * under that model's id.
 */
export function modelNameInUse(model: ModelSpec, modelName: string | undefined, project: { model?: unknown; modelName?: unknown }): string {
  const projectsName = modelName !== undefined && modelName === project.modelName;
  if (modelName === undefined || (projectsName && !isDeepStrictEqual(modelCondition(model), modelCondition((project.model ?? '') as ModelSpec)))) return modelId(model);
  return modelName;
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

/**
 * The condition with every absolute path of this machine written so that it reads the same in
 * another clone or on another machine, and shows no one where a user's files are: under the
 * config's folder or the working folder, relative to the config's folder (with `/`); else under
 * the temporary folder, `$TMPDIR/…`; else under the home folder, `~/…`. Other absolute paths
 * (`/usr/bin/python3`) are the same everywhere and stay.
 */
export function portablePaths<T>(value: T, configDir: string): T {
  const under = (path: string, root: string) => root !== sep && (path === root || path.startsWith(root.endsWith(sep) ? root : root + sep));
  const posix = (path: string) => path.split(sep).join('/');
  const rewrite = (path: string): string => {
    if (under(path, configDir) || under(path, process.cwd())) return posix(relative(configDir, path)) || '.';
    if (under(path, tmpdir())) return `$TMPDIR/${posix(relative(tmpdir(), path))}`;
    if (under(path, homedir())) return `~/${posix(relative(homedir(), path))}`;
    return path;
  };
  const portable = (item: unknown): unknown => {
    if (typeof item === 'string') return isAbsolute(item) ? rewrite(item) : item;
    if (Array.isArray(item)) return item.map(portable);
    if (typeof item === 'object' && item !== null) return Object.fromEntries(Object.entries(item).map(([key, entry]) => [key, portable(entry)]));
    return item;
  };
  return portable(value) as T;
}
