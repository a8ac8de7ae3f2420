import { redact, Trace, type StopReason, type TraceEventBody } from '../harness/trace.ts';
import { claimSchema, type Agent, type AgentClaim, type AgentInput, type AgentResult, type AgentRun, type Containment } from '../eval/agent.ts';
import type { Site } from '../sites/site.ts';
import type { Escapes } from './sandbox.ts';
import { serveSite } from '../sites/serve.ts';
import { startGateway } from './gateway.ts';

/** What a foreign agent's body ends with: its claim, or nothing claimed and why; and what a sandbox saw it try. */
export type ForeignOutcome = (
  | { claim: AgentClaim; stopReason?: undefined }
  | {
      claim?: undefined;
      /** Why there is no claim, in one line: `no claim file`, `killed at its time limit (30000 ms)`. */
      reason: string;
      /** `timeout` when the agent was stopped at its time limit, `error` when it crashed: the run is incomplete. */
      stopReason?: Extract<StopReason, 'timeout' | 'error'>;
    }
) & { escapes?: Escapes };

export interface ForeignAgentOptions {
  name: string;
  condition: Record<string, unknown>;
  /** Give the agent the site's account (`HN_USERNAME`/`HN_PASSWORD` for a command). */
  account?: boolean;
  /**
   * Untrusted code: the site makes a login for this run (`site.issueCredential`), so the site's
   * own password stops working; the agent gets that login only with `account`, else none.
   */
  issueCredential?: boolean;
  /** How its runs are contained: see `Agent.containment`. */
  containment(site: Site): Containment;
}

/**
 * An agent harness-eval did not write: it gets the task, the site (a page, and plain HTTP on
 * 127.0.0.1) and the model through a gateway for this run only, and returns a claim. Its
 * iterations are its model calls, its tokens what the gateway counted.
 */
export function foreignAgent(options: ForeignAgentOptions, body: (input: AgentInput, run: AgentRun) => Promise<ForeignOutcome>): Agent {
  return {
    name: options.name,
    condition: options.condition,
    containment: options.containment,
    async run(given) {
      const startedAt = Date.now();
      const credential = options.issueCredential ? given.site.issueCredential?.() : undefined;
      // The run's login is a secret like the site's own password: redacted from everything the run records.
      const run: AgentRun = credential ? { ...given, secrets: [...given.secrets, credential.password] } : given;
      const trace = new Trace(() => run.secrets);
      let calls = 0;
      const record = (event: TraceEventBody) => trace.append(event, { attempt: 1, iteration: calls });
      record({ type: 'run_start', task: run.task.prompt, model: run.model.id, layers: [] });
      record({ type: 'attempt_start' });
      const signal = run.signal ?? new AbortController().signal;
      const gateway = await startGateway({
        model: run.model,
        signal,
        secrets: run.secrets,
        record: (event) => {
          if (event.type === 'model_request') calls += 1;
          record(event);
        },
      });
      const server = await serveSite(run.site).catch(async (error: unknown) => {
        await gateway.close();
        throw error;
      });
      const session = await run.openSession(1);
      let outcome: ForeignOutcome;
      try {
        outcome = await body(
          {
            task: run.task.prompt,
            page: session.page,
            site: { origin: run.site.origin, url: server.url, ...(options.account && { account: credential ?? run.site.account }) },
            model: gateway.endpoint,
            signal,
            trace: { record: (name, data) => void record({ type: 'custom', layer: options.name, name, ...(data && { data }) }) },
            outputDir: run.outputDir,
          },
          run,
        );
      } catch (error) {
        outcome = { reason: `the agent failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`, stopReason: 'error' };
      } finally {
        await Promise.allSettled([gateway.close(), server.close(), session.close()]);
      }
      const stopReason: StopReason = outcome.stopReason ?? (signal.aborted ? 'timeout' : 'finished');
      const claimed = outcome.claim?.success === true;
      record({ type: 'run_end', claimed, stopReason, iterations: calls });
      const result: AgentResult = {
        task: run.task.prompt,
        model: run.model.id,
        layers: [],
        claimed,
        summary: outcome.claim ? outcome.claim.summary : `claimed nothing: ${outcome.reason}`,
        ...(outcome.claim?.answer !== undefined && { answer: outcome.claim.answer }),
        stopReason,
        iterations: calls,
        attempts: 1,
        tokens: gateway.tokens(),
        wallMs: Date.now() - startedAt,
        trace: [...trace.events],
        ...(outcome.escapes && { escapes: outcome.escapes }),
      };
      // The claim's words are the agent's: it may have written a secret into them.
      return redact(result, run.secrets);
    },
  };
}

/** A claim as an agent wrote it (a file, a function's return value), checked: anything else is no claim, with the reason. */
export function readClaim(value: unknown, where: string): ForeignOutcome {
  const parsed = claimSchema.safeParse(value);
  if (parsed.success) return { claim: parsed.data };
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(claim)'}: ${issue.message}`).join('; ');
  return { reason: `${where} is not a claim { success, summary, answer? } (${problems})` };
}
