import { z } from 'zod';
import { BUILT_IN_AGENT } from '../core/run.ts';
import type { TraceEvent } from '../core/trace.ts';
import { runOutcome } from '../report/format.ts';
import type { PriceTable } from '../report/types.ts';
import { callCost, HARNESS_EVAL_VERSION, modelOf, rewardOf } from './run-facts.ts';
import type { NamedRun } from './runs.ts';
import { canonicalJson } from '../text.ts';
import { eventData, resultText, taskPrompt, timeline, type ModelCall, type ToolRun } from './timeline.ts';

/**
 * A run as an ATIF trajectory: Harbor's Agent Trajectory Interchange Format (RFC 0001), the part of
 * it harness-eval writes, in its field names. tests/fixtures/export/atif-v1.6.schema.json is the
 * whole of it, and tests/export.spec.ts checks every trajectory against it.
 */
export const ATIF_VERSION = 'ATIF-v1.6';

const toolCallSchema = z.object({ tool_call_id: z.string(), function_name: z.string(), arguments: z.record(z.string(), z.unknown()) });
/** A tool's result; `source_call_id` names the call of its own step it answers, absent for a call no model step made. */
const observationResultSchema = z.object({ source_call_id: z.string().optional(), content: z.string() });
const metricsSchema = z.object({ prompt_tokens: z.number().int().optional(), completion_tokens: z.number().int().optional(), cost_usd: z.number().optional() });

/** Where a step happened in the run, and what in it failed: its calls whose result was an error, or its model call's error. */
const stepExtraSchema = z.object({
  attempt: z.number(),
  iteration: z.number(),
  tool_call_id: z.string().optional(),
  failed_tool_calls: z.array(z.string()).optional(),
  error: z.string().optional(),
  event: z.string().optional(),
});
type StepExtra = z.infer<typeof stepExtraSchema>;

const stepSchema = z.object({
  step_id: z.number().int().min(1),
  timestamp: z.string(),
  source: z.enum(['system', 'user', 'agent']),
  message: z.string(),
  tool_calls: z.array(toolCallSchema).optional(),
  observation: z.object({ results: z.array(observationResultSchema) }).optional(),
  metrics: metricsSchema.optional(),
  extra: stepExtraSchema.optional(),
});
export type Step = z.infer<typeof stepSchema>;

const trajectorySchema = z.object({
  schema_version: z.literal(ATIF_VERSION),
  session_id: z.string(),
  agent: z.object({ name: z.string(), version: z.string(), model_name: z.string(), extra: z.record(z.string(), z.unknown()) }),
  steps: z.array(stepSchema).min(1),
  final_metrics: z.object({
    total_prompt_tokens: z.number().int().optional(),
    total_completion_tokens: z.number().int().optional(),
    total_cached_tokens: z.number().int().optional(),
    total_cost_usd: z.number().optional(),
    total_steps: z.number().int(),
  }),
  /** ATIF has no reward of its own (Harbor keeps it beside the trajectory): the oracle's verdict is here. */
  extra: z.record(z.string(), z.unknown()),
});
export type Trajectory = z.infer<typeof trajectorySchema>;

/** A step before it is numbered. */
type Unnumbered = Omit<Step, 'step_id'>;

/**
 * The run's trace as steps: the task (user), each model call (agent: its words, its tool calls
 * with their results as the observation, its tokens and what `cost` makes of them), and every other
 * event (system: a model error, a call the harness, a program or an agent of its own made, the
 * harness's own events). A command agent's tools are its own, so its model's calls are answered by
 * what was seen of them from outside: the call it then made over MCP (`by: 'agent'`, the same tool
 * with the same arguments), else the result its next model request carried back through the gateway
 * (as the trace keeps it, cut). Its other MCP calls are system steps of their own.
 */
export function trajectorySteps(trace: readonly TraceEvent[], task: string, startMs: number, cost: (usage: { input: number | null; output: number | null }) => number | undefined = () => undefined): Step[] {
  const at = (ms: number) => new Date(startMs + ms).toISOString();
  const steps: Unnumbered[] = [{ timestamp: at(trace[0]?.atMs ?? 0), source: 'user', message: taskPrompt(trace, task) }];
  // The latest model step: the calls it made get their results in it, each once.
  let asked: { step: Unnumbered; extra: StepExtra; calls: ModelCall['toolCalls']; answered: Set<string> } | undefined;
  const answer = (id: string, content: string, ok: boolean) => {
    asked!.answered.add(id);
    (asked!.step.observation ??= { results: [] }).results.push({ source_call_id: id, content });
    if (!ok) asked!.extra.failed_tool_calls = [...(asked!.extra.failed_tool_calls ?? []), id];
  };
  for (const moment of timeline(trace)) {
    if (moment.kind === 'model' && asked) {
      // What this call's request carried back of the last step's calls no tool result answered (the gateway saw it).
      for (const { id } of asked.calls) {
        const told = asked.answered.has(id) ? undefined : moment.sent?.find((message) => message.role === 'tool' && message.text.startsWith(`${id}: `));
        if (told) answer(id, told.text.slice(id.length + 2), true);
      }
    }
    if (moment.kind === 'model' && moment.error) {
      steps.push({ timestamp: at(moment.endMs), source: 'system', message: `model error (${moment.error.kind}): ${moment.error.message}`, extra: { attempt: moment.attempt, iteration: moment.iteration, error: moment.error.kind } });
    } else if (moment.kind === 'model') {
      const { input, output } = moment.usage;
      const usd = cost(moment.usage);
      const metrics = { ...(input !== null && { prompt_tokens: input }), ...(output !== null && { completion_tokens: output }), ...(usd !== undefined && { cost_usd: usd }) };
      const extra: StepExtra = { attempt: moment.attempt, iteration: moment.iteration };
      const step: Unnumbered = {
        timestamp: at(moment.endMs),
        source: 'agent',
        message: moment.content ?? '',
        ...(moment.toolCalls.length > 0 && { tool_calls: moment.toolCalls.map((call) => ({ tool_call_id: call.id, function_name: call.name, arguments: argumentsObject(call.arguments) })) }),
        ...(Object.keys(metrics).length > 0 && { metrics }),
        extra,
      };
      steps.push(step);
      asked = { step, extra, calls: moment.toolCalls, answered: new Set() };
    } else if (moment.kind === 'tool' && answerable(asked, moment) !== undefined) {
      // A call of the model's step: its result is that step's observation (none when the run ended first).
      if (moment.result) answer(answerable(asked, moment)!, resultText(moment.result), moment.result.ok);
    } else if (moment.kind === 'tool') {
      const { call, result } = moment;
      steps.push({
        timestamp: at(moment.startMs),
        source: 'system',
        // An older trace does not say whose call it was: not the model's, at least.
        message: `${call.by ?? 'the harness or a program'} called ${call.name}(${call.arguments})`,
        ...(result && { observation: { results: [{ content: resultText(result) }] } }),
        extra: { attempt: call.attempt, iteration: call.iteration, tool_call_id: call.callId, ...(result && !result.ok && { failed_tool_calls: [call.callId] }) },
      });
    } else if (moment.kind === 'event') {
      const { event } = moment;
      steps.push({ timestamp: at(event.atMs), source: 'system', message: `${event.type}: ${eventData(event)}`, extra: { attempt: event.attempt, iteration: event.iteration, event: event.type } });
    }
  }
  return steps.map((step, index) => ({ step_id: index + 1, ...step }));
}

/**
 * The latest model step's call a tool call answers, if one: the call itself (the built-in harness
 * runs its model's calls), or, for an agent of its own's MCP call, the first unanswered call of the
 * model's to the same tool with the same arguments.
 */
function answerable(asked: { calls: ModelCall['toolCalls']; answered: Set<string> } | undefined, { call }: ToolRun): string | undefined {
  if (!asked) return undefined;
  const open = asked.calls.filter((each) => !asked.answered.has(each.id));
  if (call.by !== 'agent') return open.find((each) => each.id === call.callId)?.id;
  return open.find((each) => each.name === call.name && canonicalJson(argumentsObject(each.arguments)) === canonicalJson(argumentsObject(call.arguments)))?.id;
}

/** The run as one ATIF trajectory, its verdict as the reward; `prices` gives each model step its cost. */
export function toTrajectory({ name, run, startMs }: NamedRun, prices?: PriceTable): Trajectory {
  const steps = trajectorySteps(run.trace, run.task, startMs, (usage) => callCost(run, prices, usage));
  const stepsCost = steps.some((step) => step.metrics?.cost_usd !== undefined) ? steps.reduce((sum, step) => sum + (step.metrics?.cost_usd ?? 0), 0) : undefined;
  const totalCost = run.cost ?? stepsCost;
  return {
    schema_version: ATIF_VERSION,
    session_id: name,
    agent: {
      name: run.agent,
      // A user's agent names no version of its own to harness-eval.
      version: run.agent === BUILT_IN_AGENT ? HARNESS_EVAL_VERSION : 'unknown',
      model_name: modelOf(run).id,
      extra: { layers: run.layers, condition: run.condition },
    },
    steps,
    final_metrics: {
      ...(run.tokens.input !== null && { total_prompt_tokens: run.tokens.input }),
      ...(run.tokens.output !== null && { total_completion_tokens: run.tokens.output }),
      ...(run.tokens.cachedInput !== undefined && { total_cached_tokens: run.tokens.cachedInput }),
      ...(totalCost !== undefined && { total_cost_usd: totalCost }),
      total_steps: steps.length,
    },
    extra: {
      reward: rewardOf(run),
      outcome: runOutcome(run),
      task: run.task,
      site: run.site,
      claimed: run.claimed,
      actual: run.actual,
      false_success: run.falseSuccess,
      false_failure: run.falseFailure,
      incomplete: run.incomplete,
      judged: run.judged,
      stop_reason: run.stopReason,
      iterations: run.iterations,
      attempts: run.attempts,
      wall_ms: run.wallMs,
      ...(run.summary !== undefined && { summary: run.summary }),
      ...(run.answer !== undefined && { answer: run.answer }),
      ...(run.verdicts && { verdicts: run.verdicts }),
      side_effects: run.sideEffects,
      ...(run.excluded && { excluded: run.excluded }),
      test: run.test,
    },
  };
}

/** A call's arguments as ATIF wants them, an object: its JSON when that is one, else the text under `input`. */
function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Not JSON: kept as the text it is.
  }
  return { input: text };
}
