import { z } from 'zod';
import { parseInput } from '../input.ts';
import type { Layer } from './context.ts';

/** The hooks' interface lives with the run context that calls them (context.ts), so the two never import each other. */
export type { AttemptOutcome, Layer } from './context.ts';

/** A layer's hooks, as its `create` returns them: `defineLayer` names them. */
export type LayerHooks = Omit<Layer, 'name'>;

/** What a run tells its layers when it creates them. */
export interface LayerSetup {
  /** A folder of the run's own (under Playwright, in the test's output folder): where a layer's files go unless its options say. */
  outputDir: string;
}

/**
 * A layer as a spec holds it (`retry({ attempts: 3 })`): its name and its checked options, and,
 * called with the run's setup, a fresh `Layer` for that run. A function, so that Playwright never
 * takes a stack of them for a `[value, options]` fixture tuple (it reads any object there as options).
 */
export interface LayerValue<Options = unknown> {
  (setup: LayerSetup): Layer;
  readonly name: string;
  /** The options with every default applied: with the name, what the run record shows as the layer's condition. */
  readonly options: Options;
}

/** A layer's factory: options in (optional when every one has a default), a LayerValue out. */
export type LayerFactory<S extends z.ZodType> = (...options: {} extends z.input<S> ? [options?: z.input<S>] : [options: z.input<S>]) => LayerValue<z.output<S>>;

export interface LayerDefinition<S extends z.ZodType> {
  /** The name in specs, reports and the trace. */
  name: string;
  /** The options' schema (default: none accepted). Checked when the layer is written, so bad options fail before any page opens. */
  options?: S;
  /** One run's hooks. Called once per run: state kept in its closure belongs to that run alone. */
  create(options: z.output<S>, setup: LayerSetup): LayerHooks;
}

const noOptions = z.object({}).strict();

/**
 * Defines a layer, as every built-in one is: `const counter = defineLayer({ name, options, create })`,
 * then `layers: [counter({ … })]` in a spec. Bad options throw an InputError naming the field.
 */
export function defineLayer<S extends z.ZodType = typeof noOptions>({ name, options: schema, create }: LayerDefinition<S>): LayerFactory<S> {
  return (...[options]) => {
    const parsed = parseInput(schema ?? noOptions, options ?? {}, `layer ${name}`) as z.output<S>;
    const value = (setup: LayerSetup): Layer => ({ ...create(parsed, setup), name });
    return Object.defineProperties(value, { name: { value: name }, options: { value: parsed, enumerable: true } }) as LayerValue<z.output<S>>;
  };
}

/** Whether `value` is a LayerValue (from `defineLayer`), not a bare function or hooks object. */
export function isLayerValue(value: unknown): value is LayerValue {
  return typeof value === 'function' && typeof value.name === 'string' && value.name !== '' && Object.hasOwn(value, 'options');
}
