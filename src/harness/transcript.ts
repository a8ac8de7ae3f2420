import type { SentMessage, TraceEvent } from '../core/trace.ts';

/** The trace as a person reads it: one line per event that says something. */
export function transcript(trace: readonly TraceEvent[]): string {
  // What the previous model call was given: each call's messages are shown from where they differ.
  let before: readonly SentMessage[] = [];
  return trace
    .map((event) => {
      const at = `#${event.seq} [attempt ${event.attempt}, iteration ${event.iteration}, ${event.atMs} ms]`;
      switch (event.type) {
        case 'model_request': {
          if (!event.sent) return undefined;
          const same = sharedHead(before, event.sent);
          before = event.sent;
          const tools = event.offered?.length ? `; tools: ${event.offered.join(', ')}` : '';
          const lines = event.sent.slice(same).map((message) => `    ${message.role}: ${message.text}`);
          return [`${at} model given ${event.messages} messages (${same} as before)${tools}`, ...lines].join('\n');
        }
        case 'model_response':
          return `${at} model: ${event.content ?? ''}${event.toolCalls.map((call) => ` ${call.name}(${call.arguments})`).join('')}`;
        // What an agent of its own did (a command or ACP agent's MCP calls, as the run's MCP surface saw them): the model's calls are in its responses above.
        case 'tool_call':
          return event.by === 'agent' ? `${at} agent called ${event.name}(${event.arguments})` : undefined;
        case 'tool_result':
          return `${at} ${event.name} → ${event.ok ? JSON.stringify(event.output) : `error: ${event.error}`}`;
        case 'harness_auto_login':
          return `${at} harness logged in (${event.ok ? 'ok' : 'refused'}) at ${event.from}`;
        case 'harness_note':
          return `${at} harness (${event.layer}): ${event.message}`;
        case 'harness_approval':
          return `${at} approval: ${event.tool ? `${event.tool} ` : ''}${event.decision} ${event.action}${event.requestId ? ` (request ${event.requestId})` : ''}`;
        case 'harness_denied':
          return `${at} ${event.layer}: denied ${event.tool}: ${event.reason}`;
        case 'harness_verification':
          return `${at} verify: ${event.ok ? 'confirmed' : 'rejected'}: ${event.detail}`;
        case 'harness_unverified':
          return `${at} ${event.layer}: unverified: ${event.detail}`;
        case 'harness_guardrail_stop':
          return `${at} stop (${event.reason}): ${event.detail}`;
        case 'harness_compaction':
          return `${at} ${event.layer} compacted the conversation: ${event.before} → ${event.after} messages`;
        case 'harness_subroutine':
          return `${at} subroutine: replayed ${event.replayed} of ${event.of} steps${event.diverged ? `, diverged at step ${event.diverged.step}: ${event.diverged.why}` : ''}`;
        case 'harness_recovery':
          return `${at} recovery: ${event.lost}; ${event.recovered ? `reopened on ${event.url} with ${event.cookies} cookies` : `not recovered: ${event.detail}`}`;
        case 'custom':
          return `${at} ${event.layer}: ${event.name}${event.data ? ` ${JSON.stringify(event.data)}` : ''}`;
        case 'model_error':
          return `${at} model error (${event.kind}): ${event.message}`;
        case 'model_request_refused':
          return `${at} the model gateway refused a request (${event.status}): ${event.message}`;
        case 'run_end':
          return `${at} end: claimed ${event.claimed ? 'success' : 'failure'}, ${event.stopReason} after ${event.iterations} iteration${event.iterations === 1 ? '' : 's'}`;
        default:
          return undefined;
      }
    })
    .filter((line) => line !== undefined)
    .join('\n');
}

/** How many messages `next` begins with that `previous` began with too. */
function sharedHead(previous: readonly SentMessage[], next: readonly SentMessage[]): number {
  let same = 0;
  while (same < previous.length && same < next.length && previous[same]!.role === next[same]!.role && previous[same]!.text === next[same]!.text) same += 1;
  return same;
}
