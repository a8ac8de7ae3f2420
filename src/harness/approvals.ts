import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '../input.ts';
import { canonicalJson, writeFileAtomic } from '../text.ts';
import type { RunView } from './context.ts';
import { approvalKinds, approvalRequestSchema, approvalScopes, type ApprovalRequest } from '../core/trace.ts';

export { approvalRequestSchema, type ApprovalRequest } from '../core/trace.ts';

/** A person's decision, as they (or `decide`) write it: `<id>.decision.json`, beside the request. */
const approvalDecisionSchema = z
  .object({
    id: z.string().min(1),
    decision: z.enum(['approved', 'denied']),
    decidedAt: z.iso.datetime(),
    by: z.string().optional(),
    /** The request's own scope and expiry unless the decision sets others. */
    scope: z.enum(approvalScopes).optional(),
    expiresAt: z.iso.datetime().optional(),
  })
  .strict();
export type ApprovalDecision = z.infer<typeof approvalDecisionSchema>;

/** How long a request stays open unless the options say otherwise: a day. */
const DAY_MS = 24 * 60 * 60 * 1000;

/** The store's folder unless the options name one, relative to the working directory: where `harness-eval approvals` looks by default. */
export const DEFAULT_APPROVALS_DIR = 'approvals';

/** The store as a layer's options name it: its folder, the scope a request asks for, and how long it stays open. */
export const approvalStoreOptions = z
  .object({
    dir: z.string().min(1).default(DEFAULT_APPROVALS_DIR),
    scope: z.enum(approvalScopes).default('call'),
    expiresInMs: z.number().int().positive().default(DAY_MS),
  })
  .strict();
export type ApprovalStoreOptions = z.output<typeof approvalStoreOptions>;

/** What a layer asks about; the store adds the id, the run, the hash, the scope and the times. */
interface ApprovalAsk {
  kind: (typeof approvalKinds)[number];
  action: string;
  resource: string;
  /** `argsHash(args)` of the call's arguments (of the stuck turn, for `continue`). */
  argsHash: string;
  reason: string;
  /** The tool call it holds back, when it is one. */
  callId?: string;
  tool?: string;
}

type Verdict = 'approved' | 'denied' | 'paused';

/** Where a request stands for the person deciding: `pending` until decided or expired. */
export type RequestStatus = ApprovalDecision['decision'] | 'pending' | 'expired';

/**
 * Requests and decisions in a folder, one file each, written atomically: the harness writes
 * requests, a person writes decisions, and neither ever rewrites the other's file. A decision
 * covers a call when its request was for the same action, resource and arguments, it has not
 * expired, and its scope reaches the call (a `call` decision is spent once used).
 */
export class ApprovalStore {
  constructor(readonly dir: string) {}

  file(request: ApprovalRequest): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(join(this.dir, `${request.id}.request.json`), JSON.stringify(request, null, 2));
  }

  decide(id: string, decision: ApprovalDecision['decision'], more: Omit<ApprovalDecision, 'id' | 'decision' | 'decidedAt'> & { decidedAt?: string } = {}): void {
    const written = approvalDecisionSchema.parse({ id, decision, decidedAt: new Date().toISOString(), ...more });
    mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(join(this.dir, `${id}.decision.json`), JSON.stringify(written, null, 2));
  }

  /** A decision made ahead of any request (a spec pre-filling the store): the request it answers, and the decision, at once. */
  grant(request: Omit<ApprovalRequest, 'version' | 'id' | 'requestedAt' | 'expiresAt'> & { expiresInMs?: number }, decision: ApprovalDecision['decision'] = 'approved'): ApprovalRequest {
    const { expiresInMs = DAY_MS, ...fields } = request;
    const filed = approvalRequestSchema.parse(newRequest(fields, expiresInMs));
    this.file(filed);
    this.decide(filed.id, decision);
    return filed;
  }

  requests(): ApprovalRequest[] {
    return this.names('.request.json').map((name) => readJsonFile(join(this.dir, name), approvalRequestSchema, 'approval request', { remedy: 'delete it, and the run asks again' }));
  }

  /** Every request with where it stands, oldest first: what `harness-eval approvals list` prints. */
  statuses(now = Date.now()): Array<{ request: ApprovalRequest; status: RequestStatus; decision?: ApprovalDecision }> {
    const all = this.requests().map((request) => {
      const decision = this.decisionOn(request.id);
      const status: RequestStatus = decision ? decision.decision : Date.parse(request.expiresAt) > now ? 'pending' : 'expired';
      return { request, status, ...(decision && { decision }) };
    });
    return all.sort((a, b) => Date.parse(a.request.requestedAt) - Date.parse(b.request.requestedAt));
  }

  decisionOn(id: string): ApprovalDecision | undefined {
    const file = join(this.dir, `${id}.decision.json`);
    if (!existsSync(file)) return undefined;
    const decision = readJsonFile(file, approvalDecisionSchema, 'approval decision', { remedy: 'write it again as { id, decision, decidedAt }, or delete it' });
    return decision.id === id ? decision : undefined;
  }

  /** The latest live decision covering `asked` (its run and task, and the `call` decisions already spent), if any. */
  covering(asked: Omit<ApprovalRequest, 'id' | 'version' | 'scope' | 'requestedAt' | 'expiresAt' | 'reason'>, spent: ReadonlySet<string>, now = Date.now()) {
    const found = this.requests().flatMap((request) => {
      const decision = this.decisionOn(request.id);
      if (!decision || !sameAsk(request, asked)) return [];
      const scope = decision.scope ?? request.scope;
      const live = Date.parse(decision.expiresAt ?? request.expiresAt) > now;
      const reaches = scope === 'task' ? request.task === asked.task : request.runId === asked.runId && !(scope === 'call' && spent.has(request.id));
      return live && reaches ? [{ request, decision }] : [];
    });
    return found.sort((a, b) => Date.parse(b.decision.decidedAt) - Date.parse(a.decision.decidedAt))[0];
  }

  /** A live request of this run for the same thing that still waits for its decision. */
  waiting(asked: Pick<ApprovalRequest, 'runId' | 'kind' | 'action' | 'resource' | 'argsHash'>, now = Date.now()): ApprovalRequest | undefined {
    return this.requests().find((request) => request.runId === asked.runId && sameAsk(request, asked) && Date.parse(request.expiresAt) > now && !this.decisionOn(request.id));
  }

  private names(suffix: string): string[] {
    return existsSync(this.dir) ? readdirSync(this.dir).filter((name) => name.endsWith(suffix)).sort() : [];
  }
}

function sameAsk(request: ApprovalRequest, asked: Pick<ApprovalRequest, 'kind' | 'action' | 'resource' | 'argsHash'>): boolean {
  return request.kind === asked.kind && request.action === asked.action && request.resource === asked.resource && request.argsHash === asked.argsHash;
}

/** A new request for these fields, open from now for `expiresInMs`. */
function newRequest(fields: Omit<ApprovalRequest, 'version' | 'id' | 'requestedAt' | 'expiresAt'>, expiresInMs: number): ApprovalRequest {
  const now = Date.now();
  return { version: 1, id: randomUUID(), ...fields, requestedAt: new Date(now).toISOString(), expiresAt: new Date(now + expiresInMs).toISOString() };
}

/** sha256 of the arguments as canonical JSON (keys sorted): the same arguments, however the model ordered them, hash alike. */
export function argsHash(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args) ?? 'null').digest('hex');
}

const freshRunIds = new WeakMap<RunView, string>();

/** The run's id in the store: the one its first request recorded (so a resumed run keeps it), else a new one. */
function runIdOf(run: RunView): string {
  const recorded = run.trace.of('harness_approval_request')[0]?.runId;
  if (recorded) return recorded;
  if (!freshRunIds.has(run)) freshRunIds.set(run, randomUUID());
  return freshRunIds.get(run)!;
}

/**
 * Asks the store about an action: a live decision that covers it answers (recorded as
 * `harness_approval`); otherwise its request is filed (once: a resumed run finds its own still
 * waiting) and the run pauses as `awaiting_approval`, for `durable` to save.
 */
export function askStore(run: RunView, options: ApprovalStoreOptions, ask: ApprovalAsk): Verdict {
  const store = new ApprovalStore(options.dir);
  const asked = { kind: ask.kind, task: run.task, runId: runIdOf(run), action: ask.action, resource: ask.resource, argsHash: ask.argsHash };
  const found = store.covering(asked, spentIn(run));
  const where = { ...(ask.callId !== undefined && { callId: ask.callId }), ...(ask.tool !== undefined && { tool: ask.tool }) };
  if (found) {
    run.record({ type: 'harness_approval', ...where, action: `${ask.action} ${ask.resource}`, decision: found.decision.decision, requestId: found.request.id });
    return found.decision.decision;
  }
  let request = store.waiting(asked);
  if (!request) {
    request = newRequest({ ...asked, scope: options.scope, reason: ask.reason }, options.expiresInMs);
    store.file(request);
  }
  const { version: _version, id: requestId, ...fields } = request;
  run.record({ type: 'harness_approval_request', requestId, store: options.dir, ...where, ...fields });
  run.stop('awaiting_approval', `request ${requestId} (${ask.action} ${ask.resource}) awaits a decision in ${options.dir}`);
  return 'paused';
}

/** `call` decisions this run has used already: each lets one call through. */
function spentIn(run: RunView): Set<string> {
  return new Set(run.trace.of('harness_approval').flatMap((event) => (event.decision === 'approved' && event.requestId ? [event.requestId] : [])));
}

/** The error a held-back call answers while its request waits: it gets its real answer when the run resumes. */
export function awaitingError(ask: Pick<ApprovalAsk, 'action' | 'resource'>): string {
  return `paused: ${ask.action} ${ask.resource} awaits a person's decision`;
}
