import { z } from 'zod';
import type { Layer } from '../harness/layer.ts';
import { InputError, parseInput } from '../input.ts';
import { approval } from './approval.ts';
import { budget } from './budget.ts';
import { checkpoint } from './checkpoint.ts';
import { codeMode } from './code-mode.ts';
import { context } from './context.ts';
import { durable } from './durable.ts';
import { evidence } from './evidence.ts';
import { guardrails } from './guardrails.ts';
import { login } from './login.ts';
import { observations } from './observations.ts';
import { output } from './output.ts';
import { permissions } from './permissions.ts';
import { retry } from './retry.ts';
import { settle } from './settle.ts';
import { stall } from './stall.ts';
import { verify } from './verify.ts';

export { approval, budget, checkpoint, codeMode, context, durable, evidence, guardrails, login, observations, output, permissions, retry, settle, stall, verify };

/** Every layer by the name a spec or a matrix uses for it. */
export const layerFactories = {
  guardrails,
  context,
  verify,
  login,
  retry,
  durable,
  stall,
  permissions,
  approval,
  observations,
  evidence,
  budget,
  checkpoint,
  settle,
  output,
  'code-mode': codeMode,
} as const;
export type LayerName = keyof typeof layerFactories;

/** A layer as a spec names it: `'verify'`, `['guardrails', { maxIterations: 8 }]`, or a Layer. */
export type LayerSpec = LayerName | readonly [LayerName, Record<string, unknown>] | Layer;

/** A layer named in a spec: `[name]` or `[name, options]`. */
const layerSpecSchema = z.tuple([z.string(), z.record(z.string(), z.unknown()).optional()]);

export function resolveLayers(specs: readonly LayerSpec[], label = 'layers'): Layer[] {
  return specs.map((spec, index) => {
    if (typeof spec === 'object' && !Array.isArray(spec)) return spec as Layer;
    const [name, options] = parseInput(layerSpecSchema, typeof spec === 'string' ? [spec] : spec, `${label}[${index}]`);
    const factory = layerFactories[name as LayerName] as ((options: object) => Layer) | undefined;
    if (!factory) {
      throw new InputError(`${label}[${index}]: unknown layer "${name}" (accepted: ${Object.keys(layerFactories).join(', ')})`);
    }
    return factory(options ?? {});
  });
}
