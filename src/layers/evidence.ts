import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { SiteAction } from '../core/site.ts';

/** An action the browser sent during a tool call, as the site kit classified it, and whether the call ended on a login wall (then it did not take). */
interface Performed {
  action: SiteAction;
  walled: boolean;
}

/**
 * A claimed success must point at its proof: the ids of tool calls during which the browser sent
 * an action to the site (as the site kit's classifier reads the request: a vote, a hide, a
 * comment) that the call did not end on a login wall for, with nothing later undoing it (`unvote`
 * after `vote`, on the same target). A claim that cites nothing, cites calls never made, or cites
 * calls that performed nothing becomes a failure. Unlike `verify`, this loads nothing: it holds
 * the model to what its calls did.
 */
export const evidence = defineLayer({
  name: 'evidence',
  create: () => {
    /** What each call of the current attempt sent, by call id. */
    let sent = { attempt: 0, byCall: new Map<string, Performed[]>() };
    const sentIn = (run: RunView) => (sent.attempt === run.attempt ? sent.byCall : (sent = { attempt: run.attempt, byCall: new Map() }).byCall);
    return {
      checkRequest(run, request) {
        if (request.action && request.call) {
          const calls = sentIn(run);
          calls.set(request.call.id, [...(calls.get(request.call.id) ?? []), { action: request.action, walled: false }]);
        }
        return undefined;
      },
      async aroundTool(run, call, next) {
        const outcome = await next();
        const performed = sentIn(run).get(call.id);
        // An action answered with the login wall (no session) was not carried out.
        if (performed && (await run.site?.loginWall?.(run.page))) for (const each of performed) each.walled = true;
        return outcome;
      },
      onFinish(run, claim) {
        if (!claim.success) return claim;
        const cited = claim.evidence ?? [];
        const verdict = checkEvidence(run, cited, sentIn(run));
        run.record({ type: 'harness_evidence', ok: verdict.ok, cited, detail: verdict.detail });
        return verdict.ok ? claim : { ...claim, success: false, summary: `evidence rejected the claim: ${verdict.detail}. The model said: ${claim.summary}` };
      },
    };
  },
});

function checkEvidence(run: RunView, cited: readonly string[], sent: ReadonlyMap<string, Performed[]>): { ok: boolean; detail: string } {
  if (cited.length === 0) return { ok: false, detail: 'it cites no tool calls as evidence' };
  const results = run.trace.of('tool_result').filter((event) => event.attempt === run.attempt);
  const byId = new Map(results.map((result) => [result.callId, result]));
  const unknown = cited.filter((id) => !byId.has(id));
  if (unknown.length > 0) return { ok: false, detail: `it cites tool calls that were not made: ${unknown.join(', ')}` };
  for (const id of cited) {
    const result = byId.get(id)!;
    if (!result.ok) continue;
    const later = results.filter((event) => event.seq > result.seq).flatMap((event) => sent.get(event.callId) ?? []);
    for (const { action, walled } of sent.get(id) ?? []) {
      if (!walled && !later.some((each) => !each.walled && undoes(each.action, action))) return { ok: true, detail: `${id} performed ${action.detail}` };
    }
  }
  return { ok: false, detail: `none of the cited calls (${cited.join(', ')}) performed an action that holds` };
}

/** `undo` takes `action` back: its kind is `un` + the action's (as site kits name them: `unvote`, `unhide`), on the same target. */
function undoes(undo: SiteAction, action: SiteAction): boolean {
  return undo.kind === `un${action.kind}` && undo.target === action.target;
}
