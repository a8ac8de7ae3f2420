import type { TraceEventBody } from '../harness/trace.ts';
import type { ModelEndpoint } from '../eval/agent.ts';
import type { Model, Usage } from '../models/types.ts';

export interface GatewayOptions {
  /** The run's model: every call the agent makes is forwarded to it. */
  model: Model;
  /** Receives `model_request`, `model_response` and `model_error` events for the run's trace, as the built-in harness writes them. */
  record(event: TraceEventBody): void;
  /** Aborted at the run's time limit: calls in flight give way. */
  signal: AbortSignal;
}

export interface Gateway {
  endpoint: ModelEndpoint;
  /** Tokens of every call so far; a count is null once any call's was unusable. */
  tokens(): Usage;
  close(): Promise<void>;
}

/** CONTRACT STUB (helper B implements): an OpenAI- and Ollama-compatible endpoint on 127.0.0.1 for one run. */
export async function startGateway(_options: GatewayOptions): Promise<Gateway> {
  throw new Error('startGateway: not implemented yet');
}
