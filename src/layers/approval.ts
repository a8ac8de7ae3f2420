import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { ToolCall } from '../models/types.ts';
import { parseJsonObject } from '../text.ts';

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
  })
  .strict();

/**
 * Actions with consequences (a vote) wait for an approval that only the policy gives: the model's
 * words and the page's text never reach it, so neither can grant one. A click counts as a vote when
 * its target, resolved in the page, is a `vote?…how=up|un` link; so does any `navigate` to `/vote`.
 * A denied action is not executed, and the model is told so.
 */
export const approval = defineLayer({
  name: 'approval',
  options: approvalOptions,
  create({ policy }) {
    return {
      async aroundTool(run, call, next) {
        const request = await voteIn(run, call);
        if (!request) return next();
        const approved = await decide(policy, request, run);
        const action = `${request.action} ${request.target}`;
        run.record({ type: 'harness_approval', callId: call.id, tool: call.name, action, decision: approved ? 'approved' : 'denied' });
        return approved ? next() : { ok: false, kind: 'denied', error: `denied by the harness: ${action} needs approval, and it was not approved` };
      },
    };
  },
});

function decide(policy: z.output<typeof approvalOptions>['policy'], request: ApprovalRequest, run: RunContext): boolean | Promise<boolean> {
  if (typeof policy === 'function') return policy(request);
  if (policy === 'approve-once') return !run.trace.of('harness_approval').some((event) => event.decision === 'approved');
  return policy === 'approve';
}

/** The vote a call would cast, or undefined when it casts none (or its arguments do not parse: the tool rejects those). */
async function voteIn(run: RunContext, call: ToolCall): Promise<ApprovalRequest | undefined> {
  const args = parseJsonObject(call.arguments) ?? {};
  const href = call.name === 'navigate' ? args.url : call.name === 'click' ? await linkTarget(run, args.selector) : undefined;
  if (typeof href !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(href, run.page.url());
  } catch {
    return undefined;
  }
  if (url.pathname !== '/vote') return undefined;
  return { tool: call.name, action: url.searchParams.get('how') === 'un' ? 'unvote' : 'upvote', target: url.searchParams.get('id') ?? '', args };
}

/** Where clicking the selector's first match would go: the href of its closest link. */
async function linkTarget(run: RunContext, selector: unknown): Promise<string | undefined> {
  if (typeof selector !== 'string') return undefined;
  try {
    const target = run.page.locator(selector).first();
    if ((await target.count()) === 0) return undefined;
    return await target.evaluate((node) => node.closest('a')?.href);
  } catch {
    return undefined; // not a valid selector: the click tool reports it
  }
}
