import { parseArgs } from 'node:util';
import { approvalScopes } from '../core/trace.ts';
import { ApprovalStore, DEFAULT_APPROVALS_DIR, type ApprovalRequest } from '../harness/approvals.ts';
import { InputError } from '../input.ts';

export const APPROVALS_USAGE = `harness-eval approvals list [--dir ${DEFAULT_APPROVALS_DIR}]          every request in the store, with where it stands
  harness-eval approvals approve ID [--dir ${DEFAULT_APPROVALS_DIR}] [--by NAME] [--scope call|run|task]
  harness-eval approvals deny ID [--dir ${DEFAULT_APPROVALS_DIR}] [--by NAME]`;

const USAGE_LINE = `approvals: usage: harness-eval approvals list | approve ID | deny ID [--dir DIR] (the store's folder, default ${DEFAULT_APPROVALS_DIR})`;

/**
 * `harness-eval approvals`: the person's side of the approval store. `list` prints one line per
 * request; `approve` and `deny` write the decision a paused run takes up when it resumes. An ID may
 * be shortened to any prefix only one request has.
 */
export function approvals(args: string[]): void {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: { dir: { type: 'string', default: DEFAULT_APPROVALS_DIR }, by: { type: 'string' }, scope: { type: 'string' } },
  });
  const [command, id, ...extra] = positionals;
  const store = new ApprovalStore(values.dir!);
  if (command === 'list' && id === undefined) return list(store);
  if ((command === 'approve' || command === 'deny') && id !== undefined && extra.length === 0) {
    return decide(store, id, command === 'approve' ? 'approved' : 'denied', values.by, values.scope);
  }
  throw new InputError(USAGE_LINE);
}

/** `3f2a9c01-…  pending  vote 46194762  until 2026-11-27T02:00:00.000Z  the model wants to vote 46194762`. */
function list(store: ApprovalStore): void {
  const all = store.statuses();
  if (all.length === 0) return console.log(`harness-eval: no approval requests in ${store.dir}`);
  for (const { request, status, decision } of all) {
    const when = decision ? `${status} ${decision.decidedAt}${decision.by ? ` by ${decision.by}` : ''}` : status === 'pending' ? `pending until ${request.expiresAt}` : `expired ${request.expiresAt}`;
    console.log(`${request.id}  ${when}  ${request.kind === 'continue' ? 'continue' : `${request.action} ${request.resource}`} (${request.scope})  task "${request.task}": ${request.reason}`);
  }
}

function decide(store: ApprovalStore, id: string, decision: 'approved' | 'denied', by: string | undefined, scope: string | undefined): void {
  if (scope !== undefined && !(approvalScopes as readonly string[]).includes(scope)) throw new InputError(`approvals: --scope: expected ${approvalScopes.join(', ')}, got "${scope}"`);
  if (scope !== undefined && decision === 'denied') throw new InputError('approvals: --scope applies to an approval only');
  const { request, status } = requestFor(store, id);
  // A decision is written once: a run may already have acted on it.
  if (status === 'approved' || status === 'denied') throw new InputError(`approvals: request ${request.id} is already ${status}`);
  if (status === 'expired') throw new InputError(`approvals: request ${request.id} expired at ${request.expiresAt}; the run asks again when it resumes`);
  store.decide(request.id, decision, { ...(by !== undefined && { by }), ...(scope !== undefined && { scope: scope as ApprovalRequest['scope'] }) });
  console.log(`harness-eval: ${decision} ${request.id} (${request.action} ${request.resource}); the run takes it up when it resumes`);
}

/** The one request whose id is `id` or starts with it. */
function requestFor(store: ApprovalStore, id: string) {
  const all = store.statuses();
  const exact = all.find(({ request }) => request.id === id);
  if (exact) return exact;
  const matches = all.filter(({ request }) => request.id.startsWith(id));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new InputError(`approvals: no request ${id} in ${store.dir} (harness-eval approvals list shows them)`);
  throw new InputError(`approvals: ${id} starts ${matches.length} request ids in ${store.dir}; give more of it`);
}
