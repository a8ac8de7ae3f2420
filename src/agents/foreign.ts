import { redact, Trace } from '../harness/trace.ts';
import type { StopReason, TraceEventBody } from '../core/trace.ts';
import { claimSchema, type Agent, type AgentClaim, type AgentInput, type AgentResult, type AgentRun, type Containment, type ModelEndpoint } from '../core/agent.ts';
import type { Site } from '../core/site.ts';
import type { EscapeAttempt, Escapes } from '../core/agent.ts';
import { canariesReaching, serveSite } from '../serve.ts';
import { InputError } from '../input.ts';
import { cut, TEXT_CHARS } from '../report/caps.ts';
import { startGateway, type GatewaySettings } from './gateway.ts';
import { canaryList, makeCanaries, type Canaries } from './canaries.ts';

/** What a foreign agent's body ends with: its claim, or nothing claimed and why; and what a sandbox saw it try. */
export type ForeignOutcome = (
  | {
      claim: AgentClaim & { answer?: string };
      /** `limit` when its containment ended its work (a limit hit), `timeout` when its time limit did: incomplete, whatever it claimed. */
      stopReason?: Extract<StopReason, 'limit' | 'timeout'>;
    }
  | {
      claim?: undefined;
      /** Why there is no claim, in one line: `no claim file`, `killed at its time limit (30000 ms)`. */
      reason: string;
      /** `timeout` when the agent was stopped at its time limit, `error` when it crashed, `limit` when it hit a limit: the run is incomplete. */
      stopReason?: Extract<StopReason, 'timeout' | 'error' | 'limit'>;
    }
) & { escapes?: Escapes };

/** What a run starts and ends: its gateway, the site's server, its session, a foreign agent's setUp. */
interface Closable {
  close(): Promise<void>;
}

export interface ForeignAgentOptions<SetUp extends Closable | undefined = undefined> {
  name: string;
  condition: Record<string, unknown>;
  /** The names of harness-eval's layers it runs (an ACP agent's permission requests go through them): none by default. */
  layers?: readonly string[];
  /** Give the agent the site's account (`HARNESS_SITE_USERNAME`/`HARNESS_SITE_PASSWORD` for a command). */
  account?: boolean;
  /** Checks the agent can run at all (a command's program is there), before the run starts: an InputError fails the test, and no run is counted. */
  prepare?: () => void | Promise<void>;
  /**
   * Untrusted code: the site makes a login for this run (`site.issueCredential`), so the site's
   * own password stops working; the agent gets that login only with `account`, else none.
   */
  issueCredential?: boolean;
  /** How its runs are contained: see `Agent.containment`. */
  containment(site: Site): Containment;
  /** The run's gateway's limits; given, they are part of the agent's condition. */
  gateway?: GatewaySettings;
  /**
   * What the agent needs beside the session (a command's sandbox and Chromium): started with the
   * run, alongside the gateway, the site's server and the session (which takes far longer), and
   * given their endpoints once they are up (milliseconds): what needs none starts at once; the
   * run's canaries, to plant; and the run's trace, for what it serves the agent (MCP's calls).
   * Handed to the body, and closed when the run ends, however it ends.
   */
  setUp?: (run: AgentRun, endpoints: Promise<RunEndpoints>, canaries: Canaries, record: (event: TraceEventBody) => void) => Promise<SetUp>;
  /** The run's canaries, where the agent chose them ahead (a sandbox started ahead holds its decoys already); else made for the run. */
  canaries?: () => Canaries;
}

/** The run's endpoints, as a setUp gets them before the session is open. */
export interface RunEndpoints {
  /** The site over plain HTTP on 127.0.0.1. */
  site: string;
  /** The model gateway. */
  model: ModelEndpoint;
}

/**
 * An agent harness-eval did not write: it gets the task, the site (a page, and plain HTTP on
 * 127.0.0.1) and the model through a gateway for this run only, and returns a claim. Its
 * iterations are its model calls, its tokens what the gateway counted.
 */
export function foreignAgent<SetUp extends Closable | undefined = undefined>(
  options: ForeignAgentOptions<SetUp>,
  body: (input: AgentInput, run: AgentRun, setUp: SetUp | undefined) => Promise<ForeignOutcome>,
): Agent {
  return {
    name: options.name,
    condition: { ...options.condition, ...(options.gateway && { gateway: options.gateway }) },
    ...(options.prepare && { prepare: options.prepare }),
    containment: options.containment,
    async run(given) {
      const startedAt = Date.now();
      const credential = options.issueCredential ? await given.site.issueCredential?.() : undefined;
      const canaries = options.canaries?.() ?? makeCanaries();
      const decoys = canaryList(canaries);
      // The run's login and its canaries are secrets like the site's own password; the run's secrets
      // are read anew at each redaction (sessions come during the run), and so are its other getters.
      const own = [...(credential ? [credential.password] : []), ...decoys.map(({ value }) => value)];
      const run = Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(given), secrets: { get: () => [...given.secrets, ...own], enumerable: true } }) as AgentRun;
      // The gateway's token is a secret too (a command gets it as OPENAI_API_KEY): from the moment it exists.
      let token: string | undefined;
      const secrets = () => (token === undefined ? run.secrets : [...run.secrets, token]);
      const trace = new Trace(secrets);
      let calls = 0;
      const record = (event: TraceEventBody) => trace.append(event, { attempt: 1, iteration: calls });
      const layers = [...(options.layers ?? [])];
      record({ type: 'run_start', task: run.task.prompt, model: run.model.id, layers });
      record({ type: 'attempt_start' });
      const timeLimit = run.signal ?? new AbortController().signal;
      // A limit of the gateway ends the run as the time limit does: the agent is stopped.
      const limitStop = new AbortController();
      const signal = AbortSignal.any([timeLimit, limitStop.signal]);
      // Started together: none needs another but the setUp, which waits for the gateway's and the server's URLs (they take milliseconds, the page far longer) where it needs them.
      // The page first: the browser opens it while the worker starts the rest (a sandbox's spawn holds the worker for milliseconds).
      const sessionOpening = run.openSession(1);
      const gatewayStarting = startGateway({
        model: run.model,
        signal,
        secrets: run.secrets,
        waits: run.modelWaits,
        ...options.gateway,
        canaries: decoys,
        onLimit: (detail) => {
          const message = `the run went past a limit of its gateway: ${detail}`;
          record({ type: 'harness_note', layer: 'gateway', message });
          limitStop.abort(new Error(message));
        },
        record: (event) => {
          if (event.type === 'model_request') calls += 1;
          record(event);
        },
      }).then((gateway) => ((token = gateway.endpoint.apiKey), gateway));
      const serverStarting = serveSite(run.site, { canaries: decoys });
      const endpoints = Promise.all([gatewayStarting, serverStarting]).then(([gateway, server]) => ({ site: server.url, model: gateway.endpoint }));
      // Its failure is the gateway's or the server's, which startAll reports: a setUp that never awaits it must not leave it unhandled.
      endpoints.catch(() => undefined);
      // Its throw is startAll's to report, as a rejection: the page, the gateway and the server are then closed with the rest.
      const setUpStarting = Promise.resolve().then(() => options.setUp?.(run, endpoints, canaries, record));
      const [setUp, gateway, server, session] = await startAll([setUpStarting, gatewayStarting, serverStarting, sessionOpening]);
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
          setUp,
        );
      } catch (error) {
        // Bad input found only now (a program gone since it was checked): the test fails, no run is made of it.
        if (error instanceof InputError) throw error;
        outcome = { reason: `the agent failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`, stopReason: 'error' };
      } finally {
        await Promise.allSettled([setUp?.close(), gateway.close(), server.close(), session.close()]);
      }
      // A limit the run went past, or a call the gateway had to refuse for a rate limit after every retry: whatever the agent made of it, that stopped the run.
      const limit = gateway.limitHit();
      const rateLimited = gateway.rateLimited();
      const stopReason: StopReason = limit !== undefined ? 'limit' : rateLimited !== undefined ? 'rate_limited' : (outcome.stopReason ?? (timeLimit.aborted ? 'timeout' : 'finished'));
      const claimed = outcome.claim?.success === true;
      const claimParts = outcome.claim ? { summary: outcome.claim.summary, answer: outcome.claim.answer ?? '' } : {};
      const escapes = withAttempts(outcome.escapes, [
        ...gateway.attempts(),
        ...server.attempts(),
        ...Object.entries(claimParts).flatMap(([part, text]) => canariesReaching(decoys, text, 'the claim', part)),
      ]);
      record({ type: 'run_end', claimed, stopReason, iterations: calls });
      const result: AgentResult = {
        task: run.task.prompt,
        model: run.model.id,
        layers,
        claimed,
        // A reason may quote what the agent wrote (a claim file that is not JSON): no terminal control of it either.
        summary: printable([outcome.claim ? outcome.claim.summary : `claimed nothing: ${outcome.reason}`, limit && `limit reached: ${limit}`, rateLimited && `rate limited: ${rateLimited}`].filter(Boolean).join('; ')),
        ...(outcome.claim?.answer !== undefined && { answer: outcome.claim.answer }),
        stopReason,
        iterations: calls,
        attempts: 1,
        tokens: gateway.tokens(),
        wallMs: Date.now() - startedAt,
        trace: [...trace.events],
        ...(escapes && { escapes }),
      };
      // What the agent wrote of its own (its summary, its answer) may carry the token or a session.
      return redact(result, secrets());
    },
  };
}

/** The sandbox's escapes with the attempts the run saw besides (each once), or a record of them alone. */
function withAttempts(escapes: Escapes | undefined, found: readonly EscapeAttempt[]): Escapes | undefined {
  const attempts = [...(escapes?.attempts ?? [])];
  for (const attempt of found) if (!attempts.some((seen) => seen.kind === attempt.kind && seen.detail === attempt.detail)) attempts.push(attempt);
  if (attempts.length === 0) return escapes;
  return { processesLeft: escapes?.processesLeft ?? 0, attempts };
}

/** What `starting` starts, once all have; when one fails, those that started are closed again, and its error thrown. */
async function startAll<T extends readonly (Closable | undefined)[]>(starting: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(starting);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed === undefined) return settled.map((result) => (result as PromiseFulfilledResult<Closable | undefined>).value) as unknown as T;
  await Promise.allSettled(settled.map((result) => result.status === 'fulfilled' && result.value?.close()));
  throw failed.reason;
}

/** A claim's answer as the run records it: a string as written, any other JSON value as its JSON text (42 → "42"). */
function answerText(answer: unknown): string {
  return typeof answer === 'string' ? answer : JSON.stringify(answer);
}

/** ANSI escape sequences (CSI, as `ESC [ 31 m`), then every other control but tab and newline: C0, DEL and C1 (ESC among them). */
const TERMINAL_CONTROLS = [/\u001b\[[0-?]*[ -/]*[@-~]/g, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g];

/** The text with no control a terminal acts on: a claim reaches the console (a matcher's message) and the reports. */
function printable(text: string): string {
  return TERMINAL_CONTROLS.reduce((kept, controls) => kept.replace(controls, ''), text);
}

/**
 * A claim as an agent wrote it (a file, a function's return value), checked: anything else is no
 * claim, with the reason. Its summary and answer lose every terminal control (an agent cannot
 * colour, move or clear the console through them) and are cut as a run record's text is (caps.ts),
 * saying so: an agent cannot flood the report through its claim.
 */
export function readClaim(value: unknown, where: string): ForeignOutcome {
  const parsed = claimSchema.safeParse(value);
  if (parsed.success) {
    const { answer, summary, success } = parsed.data;
    return { claim: { success, summary: cut(printable(summary), TEXT_CHARS), ...(answer !== undefined && { answer: cut(printable(answerText(answer)), TEXT_CHARS) }) } };
  }
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(claim)'}: ${issue.message}`).join('; ');
  return { reason: `${where} is not a claim { success, summary, answer? } (${problems})` };
}
