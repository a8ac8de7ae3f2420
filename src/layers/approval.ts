import { z } from 'zod';
import { actionTarget } from '../harness/actions.ts';
import { approvalStoreOptions, argsHash, askStore, awaitingError } from '../harness/approvals.ts';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { ToolCall } from '../core/model.ts';

/** An action that needs a person's yes, as the policy is asked about it. */
export interface ApprovalRequest {
  tool: string;
  action: 'upvote' | 'unvote';
  /** The story's id. */
  target: string;
  /** The call's arguments as the model wrote them. */
  args: Record<string, unknown>;
}
export type ApprovalCheck = (request: ApprovalRequest) => boolean | Promise<boolean>;

export const approvalOptions = z
  .object({
    policy: z
      .union([z.enum(['approve', 'deny', 'approve-once']), z.custom<ApprovalCheck>((value) => typeof value === 'function')], {
        error: 'expected "approve", "deny", "approve-once" or a function',
      })
      .default('deny'),
    /** An approval store: when set, it decides instead of the policy, and a vote it holds no decision on pauses the run. */
    store: approvalStoreOptions.optional(),
  })
  .strict();

/**
 * Actions with consequences (a vote) wait for an approval that only the policy or the store gives:
 * the model's words and the page's text never reach either, so neither can grant one. A click
 * counts as a vote when its target, resolved in the page, is a `vote?…how=up|un` link; so does any
 * `navigate` to `/vote`. A denied action is not executed, and the model is told so.
 */
export const approval = defineLayer({
  name: 'approval',
  options: approvalOptions,
  create({ policy, store }) {
    return {
      async aroundTool(run, call, next) {
        const request = await voteIn(run, call);
        if (!request) return next();
        const action = `${request.action} ${request.target}`;
        if (store) {
          const ask = { kind: 'action', action: request.action, resource: request.target, argsHash: argsHash(request.args), reason: `the model wants to ${action}`, callId: call.id, tool: call.name } as const;
          const verdict = askStore(run, store, ask);
          if (verdict === 'paused') return { ok: false, kind: 'awaiting_approval', error: awaitingError(ask) };
          return verdict === 'approved' ? next() : denied(action);
        }
        const approved = await decide(policy, request, run);
        run.record({ type: 'harness_approval', callId: call.id, tool: call.name, action, decision: approved ? 'approved' : 'denied' });
        return approved ? next() : denied(action);
      },
    };
  },
});

function denied(action: string) {
  return { ok: false, kind: 'denied', error: `denied by the harness: ${action} needs approval, and it was not approved` } as const;
}

function decide(policy: z.output<typeof approvalOptions>['policy'], request: ApprovalRequest, run: RunContext): boolean | Promise<boolean> {
  if (typeof policy === 'function') return policy(request);
  if (policy === 'approve-once') return !run.trace.of('harness_approval').some((event) => event.decision === 'approved');
  return policy === 'approve';
}

/** The vote a call would cast, or undefined when it casts none (or its arguments do not parse: the tool rejects those). */
async function voteIn(run: RunContext, call: ToolCall): Promise<ApprovalRequest | undefined> {
  const { args, url } = await actionTarget(run.page, call);
  if (url?.pathname !== '/vote') return undefined;
  return { tool: call.name, action: url.searchParams.get('how') === 'un' ? 'unvote' : 'upvote', target: url.searchParams.get('id') ?? '', args };
}
