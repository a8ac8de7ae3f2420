import { z } from 'zod';
import { actionTarget } from '../harness/actions.ts';
import { approvalStoreOptions, argsHash, askStore, awaitingError } from '../harness/approvals.ts';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { SiteAction } from '../core/site.ts';

/** An action that needs a person's yes, as the policy is asked about it. */
export interface ApprovalRequest {
  /** The tool call it comes from; absent for a request the page sent on its own (a script's, after the call). */
  tool?: string;
  /** What it does to the site, as the site kit classifies it. */
  action: SiteAction;
  /** The call's arguments as the model wrote them, when it is the call's own action (not a hop its request led to). */
  args?: Record<string, unknown>;
}
export type ApprovalCheck = (request: ApprovalRequest) => boolean | Promise<boolean>;

/** Signing in and out change nothing of the task's: they need no approval unless the options name them. */
const NOT_ASKED = new Set(['login', 'logout']);

export const approvalOptions = z
  .object({
    policy: z
      .union([z.enum(['approve', 'deny', 'approve-once']), z.custom<ApprovalCheck>((value) => typeof value === 'function')], {
        error: 'expected "approve", "deny", "approve-once" or a function',
      })
      .default('deny'),
    /** The kinds of action (as the site kit names them: `vote`, `hide`, `comment`…) that need approval; by default every action but `login` and `logout`. */
    actions: z.array(z.string().min(1)).min(1).optional(),
    /** An approval store: when set, it decides instead of the policy, and an action it holds no decision on pauses the run. */
    store: approvalStoreOptions.optional(),
  })
  .strict();
type ApprovalOptions = z.output<typeof approvalOptions>;

type Decision = 'approved' | 'denied' | 'paused';

/**
 * Actions with consequences (a vote, a hide, a comment) wait for an approval that only the policy
 * or the store gives: the model's words and the page's text never reach either, so neither can
 * grant one. What an action is, the site kit's classifier says: of the request a `navigate` or a
 * click would send (its target resolved in the page), and of every request the browser sends,
 * each redirect hop included, so an action reached through a chain (a `goto`, a login's redirect,
 * a script's image ping) is asked about as the same action. A denied action is not performed, and
 * the model is told so. An action is asked about once per attempt: the browser's request for the
 * action a call was asked about takes that call's decision.
 */
export const approval = defineLayer({
  name: 'approval',
  options: approvalOptions,
  create(options) {
    /** The decisions of this attempt, by action (`vote 46194762`). */
    let decided = { attempt: 0, by: new Map<string, Decision>() };
    const decisions = (run: RunView) => (decided.attempt === run.attempt ? decided.by : (decided = { attempt: run.attempt, by: new Map() }).by);

    const decide = async (run: RunView, request: ApprovalRequest, where: { callId?: string; tool?: string }, hash: string): Promise<Decision> => {
      const { action } = request;
      const what = describe(action);
      if (options.store) {
        const ask = { kind: 'action', action: action.kind, resource: action.target ?? '', argsHash: hash, reason: `the ${request.tool ? 'model' : 'page'} wants to ${what}`, ...where } as const;
        return askStore(run, options.store, ask);
      }
      const approved = await ask(options.policy, request, run);
      run.record({ type: 'harness_approval', ...where, action: what, decision: approved ? 'approved' : 'denied' });
      return approved ? 'approved' : 'denied';
    };

    return {
      async aroundTool(run, call, next) {
        const { action, args } = await actionTarget(run.page, call, run.site);
        if (!action || !asked(options, action)) return next();
        const decision = await decide(run, { tool: call.name, action, args }, { callId: call.id, tool: call.name }, argsHash(args));
        decisions(run).set(describe(action), decision);
        return decision === 'approved' ? next() : refusal(action, decision);
      },
      async checkRequest(run, request) {
        const { action } = request;
        if (!action || !asked(options, action)) return undefined;
        const key = describe(action);
        let decision = decisions(run).get(key);
        if (decision === undefined) {
          const where = request.call ? { callId: request.call.id, tool: request.call.name } : { tool: 'browser' };
          decision = await decide(run, { ...(request.call && { tool: request.call.name }), action }, where, argsHash(action));
          decisions(run).set(key, decision);
        }
        return decision === 'approved' ? undefined : refusal(action, decision);
      },
    };
  },
});

const describe = (action: SiteAction) => (action.target ? `${action.kind} ${action.target}` : action.kind);

function asked(options: ApprovalOptions, action: SiteAction): boolean {
  return options.actions ? options.actions.includes(action.kind) : !NOT_ASKED.has(action.kind);
}

function refusal(action: SiteAction, decision: Exclude<Decision, 'approved'>) {
  const what = describe(action);
  if (decision === 'paused') return { ok: false, kind: 'awaiting_approval', error: awaitingError({ action: action.kind, resource: action.target ?? '' }) } as const;
  return { ok: false, kind: 'denied', error: `denied by the harness: ${what} needs approval, and it was not approved` } as const;
}

function ask(policy: ApprovalOptions['policy'], request: ApprovalRequest, run: RunView): boolean | Promise<boolean> {
  if (typeof policy === 'function') return policy(request);
  if (policy === 'approve-once') return !run.trace.of('harness_approval').some((event) => event.decision === 'approved');
  return policy === 'approve';
}
