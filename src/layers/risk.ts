import { z } from 'zod';
import { actionTarget, type ActionTarget } from '../harness/actions.ts';
import { approvalStoreOptions, argsHash, askStore, awaitingError } from '../harness/approvals.ts';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { ToolCall } from '../core/model.ts';

const pattern = z.string().refine((source) => {
  try {
    return new RegExp(source) instanceof RegExp;
  } catch {
    return false;
  }
}, 'not a valid regular expression');

/** One rule of a policy: what it matches (every field given must match) and the score it gives. */
export const riskRuleSchema = z
  .object({
    name: z.string().min(1),
    score: z.number().min(0).max(100),
    /** What the action is, in the words a task permits (`upvote`); the name when absent. */
    action: z.string().min(1).optional(),
    tool: z.union([z.string(), z.array(z.string())]).optional(),
    /** Regular expressions on the resolved target URL: a navigate's URL, a clicked link's href, a submitted form's action. */
    host: pattern.optional(),
    path: pattern.optional(),
    /** Query parameters the target must carry, with these values. */
    query: z.record(z.string(), z.string()).optional(),
    /** The action submits a form (or, false, does not). */
    submit: z.boolean().optional(),
    /** A regular expression on the path of the page the action starts from. */
    page: pattern.optional(),
  })
  .strict();
export type RiskRule = z.infer<typeof riskRuleSchema>;

export const riskOptions = z
  .object({
    rules: z.array(riskRuleSchema).default([]),
    /** The actions the task permits: a rule for one of them scores `permitDiscount` lower. */
    permits: z.array(z.string()).default([]),
    permitDiscount: z.number().min(0).max(100).default(50),
    /** Scores from `medium` up warn; from `high` up need a person's confirmation. */
    levels: z.object({ medium: z.number().default(40), high: z.number().default(70) }).strict().default({ medium: 40, high: 70 }),
    /** Where high-risk actions are confirmed; without one they are denied. */
    store: approvalStoreOptions.optional(),
  })
  .strict();
type RiskOptions = z.output<typeof riskOptions>;

export interface RiskScore {
  score: number;
  level: 'low' | 'medium' | 'high';
  rule?: RiskRule;
}

/**
 * Scores each action call (a tool with `effect: 'act'`) from the policy's rules, which are data in
 * the spec: the tool, where the action goes (resolved in the page, as approval does), whether it
 * submits a form, and the page it starts from; an action the task permits scores lower. Low passes;
 * medium is refused once with a warning, and the same call made again passes; high needs a
 * person's confirmation through the store (or is denied without one). Every scoring is in the trace.
 */
export const risk = defineLayer({
  name: 'risk',
  options: riskOptions,
  create(options) {
    return {
      async aroundTool(run, call, next) {
        if (run.tools.get(call.name)?.effect !== 'act') return next();
        const target = await actionTarget(run.page, call);
        const scored = scoreAction(options, call, target, run.page.url());
        const record = (decision: 'passed' | 'warned' | 'overridden' | 'approved' | 'denied' | 'paused') =>
          run.record({ type: 'harness_risk', callId: call.id, tool: call.name, score: scored.score, level: scored.level, ...(scored.rule && { rule: scored.rule.name }), decision });
        const action = scored.rule?.action ?? scored.rule?.name ?? call.name;
        const resource = resourceOf(call, target);
        const what = `${action} ${resource}`;
        if (scored.level === 'low') return (record('passed'), next());
        if (scored.level === 'medium') {
          if (warnedBefore(run, call)) return (record('overridden'), next());
          record('warned');
          return { ok: false, kind: 'warning', error: `warning: ${what} is risky (${scored.rule!.name}, score ${scored.score}); make the same call again to go ahead` };
        }
        if (!options.store) {
          record('denied');
          return { ok: false, kind: 'denied', error: `denied by the harness: ${what} is high risk (${scored.rule!.name}) and needs a person's confirmation` };
        }
        const ask = { kind: 'action', action, resource, argsHash: argsHash(target.args), reason: `high risk (${scored.rule!.name}, score ${scored.score})`, callId: call.id, tool: call.name } as const;
        const verdict = askStore(run, options.store, ask);
        record(verdict);
        if (verdict === 'paused') return { ok: false, kind: 'awaiting_approval', error: awaitingError(ask) };
        return verdict === 'approved' ? next() : { ok: false, kind: 'denied', error: `denied by a person: ${what}` };
      },
    };
  },
});

/** The highest score any rule gives the action (0 when none matches), and its level. */
export function scoreAction(options: Pick<RiskOptions, 'rules' | 'permits' | 'permitDiscount' | 'levels'>, call: ToolCall, target: ActionTarget, pageUrl: string): RiskScore {
  let best: { score: number; rule?: RiskRule } = { score: 0 };
  for (const rule of options.rules) {
    if (!matches(rule, call, target, pageUrl)) continue;
    const permitted = options.permits.includes(rule.action ?? rule.name);
    const score = Math.max(0, rule.score - (permitted ? options.permitDiscount : 0));
    if (!best.rule || score > best.score) best = { score, rule };
  }
  const level = best.score >= options.levels.high ? 'high' : best.score >= options.levels.medium ? 'medium' : 'low';
  return { ...best, level };
}

function matches(rule: RiskRule, call: ToolCall, { url, submit }: ActionTarget, pageUrl: string): boolean {
  if (rule.tool !== undefined && ![rule.tool].flat().includes(call.name)) return false;
  if (rule.submit !== undefined && rule.submit !== submit) return false;
  if (rule.page !== undefined && !new RegExp(rule.page).test(pathOf(pageUrl))) return false;
  if (rule.host === undefined && rule.path === undefined && rule.query === undefined) return true;
  if (!url) return false;
  if (rule.host !== undefined && !new RegExp(rule.host).test(url.hostname)) return false;
  if (rule.path !== undefined && !new RegExp(rule.path).test(url.pathname)) return false;
  return Object.entries(rule.query ?? {}).every(([name, value]) => url.searchParams.get(name) === value);
}

function pathOf(href: string): string {
  try {
    return new URL(href).pathname;
  } catch {
    return '';
  }
}

/** What the action acts on, for the person asked: its target URL, else its selector. */
function resourceOf(call: ToolCall, target: ActionTarget): string {
  if (target.url) return target.url.href;
  return typeof target.args.selector === 'string' ? target.args.selector : call.name;
}

/** The same call (tool and arguments) was warned about earlier in this attempt: the model chose to go ahead. */
function warnedBefore(run: RunContext, call: ToolCall): boolean {
  const warned = new Set(run.trace.of('harness_risk').flatMap((event) => (event.decision === 'warned' && event.attempt === run.attempt ? [event.callId] : [])));
  return run.trace.of('tool_call').some((event) => warned.has(event.callId) && event.name === call.name && event.arguments === call.arguments);
}
