import { z } from 'zod';
import { isLayerValue, type LayerValue } from '../harness/layer.ts';
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
import { recovery } from './recovery.ts';
import { retry } from './retry.ts';
import { risk } from './risk.ts';
import { settle } from './settle.ts';
import { stall } from './stall.ts';
import { stopOnSuccess } from './stop-on-success.ts';
import { subroutines } from './subroutines.ts';
import { verify } from './verify.ts';
import { vision } from './vision.ts';

export { approval, budget, checkpoint, codeMode, context, durable, evidence, guardrails, login, observations, output, permissions, recovery, retry, risk, settle, stall, stopOnSuccess, subroutines, verify, vision };

// The rest of `harness-eval/layers`: what a spec needs beside the layers themselves.
export { defineLayer, type AttemptOutcome, type Layer, type LayerDefinition, type LayerFactory, type LayerHooks, type LayerSetup, type LayerValue } from '../harness/layer.ts';
export type { ApprovalCheck, ApprovalRequest } from './approval.ts';
export { saveSubroutine, subroutineSchema, type Subroutine } from './subroutines.ts';
export { ApprovalStore, argsHash, type ApprovalDecision, type ApprovalRequest as StoredApprovalRequest } from '../harness/approvals.ts';

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
  risk,
  observations,
  evidence,
  budget,
  checkpoint,
  settle,
  output,
  'code-mode': codeMode,
  subroutines,
  'stop-on-success': stopOnSuccess,
  recovery,
  vision,
} as const;
export type LayerName = keyof typeof layerFactories;

/** A layer as a spec writes it: by name (`'verify'`, `['guardrails', { maxIterations: 8 }]`) or as a value (`retry({ attempts: 3 })`). */
export type LayerSpec = LayerName | readonly [LayerName, Record<string, unknown>] | LayerValue;

/** A layer named in a spec: `[name]` or `[name, options]`. */
const layerSpecSchema = z.tuple([z.string(), z.record(z.string(), z.unknown()).optional()]);

/** Each layer as a value, its options checked: one shape however it was written. Bad names and options fail here, in one line. */
export function resolveLayers(specs: readonly LayerSpec[], label = 'layers'): LayerValue[] {
  return specs.map((spec, index) => {
    if (isLayerValue(spec)) return spec;
    if (typeof spec === 'function' || (typeof spec === 'object' && !Array.isArray(spec))) {
      const { name } = spec as { name?: unknown };
      throw new InputError(`${label}[${index}]: ${typeof name === 'string' && name ? `"${name}"` : 'this'} is not a layer value: write it with defineLayer({ name, create }), which gives each run its own instance`);
    }
    const [name, options] = parseInput(layerSpecSchema, typeof spec === 'string' ? [spec] : spec, `${label}[${index}]`);
    const factory = layerFactories[name as LayerName] as ((options: object) => LayerValue) | undefined;
    if (!factory) {
      throw new InputError(`${label}[${index}]: unknown layer "${name}" (accepted: ${Object.keys(layerFactories).join(', ')})`);
    }
    return factory(options ?? {});
  });
}
