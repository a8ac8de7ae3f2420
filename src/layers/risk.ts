import { z } from 'zod';
import { actionTarget, type ActionTarget } from '../harness/actions.ts';
import { approvalStoreOptions, argsHash, askStore, awaitingError } from '../harness/approvals.ts';
import type { RequestRefusal, RunView } from '../harness/context.ts';
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
    /** The kinds of site action it matches, as the site kit's classifier names them (`vote`, `hide`, `comment`). */
    kind: z.union([z.string(), z.array(z.string())]).optional(),
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
 * the spec: the tool, what the site kit says the action is (`kind`), where it goes (resolved in the
 * page, as approval does), whether it submits a form, and the page it starts from; an action the
 * task permits scores lower. Low passes; medium is refused once with a warning, and the same call
 * made again passes; high needs a person's confirmation through the store (or is denied without
 * one). Every page load and action the browser then sends, each redirect hop included, is scored
 * the same way, so a chain cannot carry an action past the policy: one its call was already scored
 * for passes as it did. Every scoring of a call, and every request that is not low, is in the trace.
 */
export const risk = defineLayer({
  name: 'risk',
  options: riskOptions,
  create(options) {
    /** What passed in this attempt, by action (`vote 46194762`) or URL: the browser's request for a call's own action is not scored twice. */
    let passed = { attempt: 0, keys: new Set<string>() };
    const passedIn = (run: RunView) => (passed.attempt === run.attempt ? passed.keys : (passed = { attempt: run.attempt, keys: new Set() }).keys);

    /** The policy's verdict on one action: undefined when it may go ahead. `quiet`: a low score is not recorded. */
    const judge = async (run: RunView, call: ToolCall, target: ActionTarget, { resource, hash, quiet }: { resource: string; hash: string; quiet: boolean }): Promise<RequestRefusal | undefined> => {
      const scored = scoreAction(options, call, target, run.page.url());
      const record = (decision: 'passed' | 'warned' | 'overridden' | 'approved' | 'denied' | 'paused') =>
        run.record({ type: 'harness_risk', callId: call.id, tool: call.name, score: scored.score, level: scored.level, ...(scored.rule && { rule: scored.rule.name }), decision });
      const action = scored.rule?.action ?? scored.rule?.name ?? call.name;
      const what = `${action} ${resource}`;
      if (scored.level === 'low') return quiet ? undefined : (record('passed'), undefined);
      if (scored.level === 'medium') {
        if (warnedBefore(run, call)) return (record('overridden'), undefined);
        record('warned');
        return { ok: false, kind: 'warning', error: `warning: ${what} is risky (${scored.rule!.name}, score ${scored.score}); make the same call again to go ahead` };
      }
      if (!options.store) {
        record('denied');
        return { ok: false, kind: 'denied', error: `denied by the harness: ${what} is high risk (${scored.rule!.name}) and needs a person's confirmation` };
      }
      const ask = { kind: 'action', action, resource, argsHash: hash, reason: `high risk (${scored.rule!.name}, score ${scored.score})`, ...(call.id && { callId: call.id }), tool: call.name } as const;
      const verdict = askStore(run, options.store, ask);
      record(verdict);
      if (verdict === 'paused') return { ok: false, kind: 'awaiting_approval', error: awaitingError(ask) };
      return verdict === 'approved' ? undefined : { ok: false, kind: 'denied', error: `denied by a person: ${what}` };
    };

    return {
      async aroundTool(run, call, next) {
        if (run.tools.get(call.name)?.effect !== 'act') return next();
        const target = await actionTarget(run.page, call, run.site);
        const refusal = await judge(run, call, target, { resource: resourceOf(call, target), hash: argsHash(target.args), quiet: false });
        if (refusal) return refusal;
        passedIn(run).add(keyOf(target));
        return next();
      },
      async checkRequest(run, request) {
        if (!request.action && !request.navigation) return undefined;
        const target: ActionTarget = { args: {}, url: new URL(request.url), submit: request.method.toUpperCase() === 'POST', ...(request.action && { action: request.action }) };
        const key = keyOf(target);
        if (passedIn(run).has(key)) return undefined;
        const call = request.call ?? { id: '', name: 'browser', arguments: '' };
        const refusal = await judge(run, call, target, { resource: key, hash: argsHash(request.action ?? request.url), quiet: true });
        if (!refusal) passedIn(run).add(key);
        return refusal;
      },
    };
  },
});

/** What an action is the same as: its site action (`vote 46194762`), else where it goes. */
function keyOf(target: ActionTarget): string {
  if (target.action) return target.action.target ? `${target.action.kind} ${target.action.target}` : target.action.kind;
  return target.url?.href ?? '';
}

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

function matches(rule: RiskRule, call: ToolCall, { url, submit, action }: ActionTarget, pageUrl: string): boolean {
  if (rule.tool !== undefined && ![rule.tool].flat().includes(call.name)) return false;
  if (rule.kind !== undefined && (!action || ![rule.kind].flat().includes(action.kind))) return false;
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
function warnedBefore(run: RunView, call: ToolCall): boolean {
  const warned = new Set(run.trace.of('harness_risk').flatMap((event) => (event.decision === 'warned' && event.attempt === run.attempt ? [event.callId] : [])));
  return run.trace.of('tool_call').some((event) => warned.has(event.callId) && event.name === call.name && event.arguments === call.arguments);
}
