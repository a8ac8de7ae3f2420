/**
 * `harness-eval/models`: models by name (`openai:…`, `ollama:…`, `scripted:…`), their cassettes
 * (record a run's model calls once, replay them offline), and the model contract's types.
 */
export { createModel, type ModelSpec } from './registry.ts';
export {
  openCassette,
  readCassette,
  resolveModelCache,
  ReplayMissError,
  type Cassette,
  type CassetteFile,
  type CassetteOptions,
  type ModelCacheMode,
  type ModelCacheOptions,
} from './cassette.ts';
export type { ChatMessage, ChatRequest, ChatResponse, Model, ResponseFormat, Sampling, ToolCall, Usage } from './types.ts';
export { registerDoubles, type OfferedTool, type ScriptedDouble, type WireMessage } from './scripted/endpoint.ts';
export { toolResult, unwrapObservations } from './scripted/results.ts';
