import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { TraceEventOf } from '../core/trace.ts';

type ToolResult = TraceEventOf<'tool_result'>;

/**
 * A claimed success must point at its proof: the ids of tool calls whose results show the upvote
 * (a click on an `#up_ID` arrow that did not land on a login page, `has_class(#up_ID, nosee)`
 * present, or `get_stories` showing the story voted), with nothing later showing it not voted. A
 * claim that cites nothing, cites calls never made, or cites calls that show no vote becomes a
 * failure. Unlike `verify`, this loads nothing: it holds the model to what it saw.
 */
export const evidence = defineLayer({
  name: 'evidence',
  create: () => ({
    onFinish(run, claim) {
      if (!claim.success) return claim;
      const cited = claim.evidence ?? [];
      const verdict = checkEvidence(run, cited);
      run.record({ type: 'harness_evidence', ok: verdict.ok, cited, detail: verdict.detail });
      return verdict.ok ? claim : { ...claim, success: false, summary: `evidence rejected the claim: ${verdict.detail}. The model said: ${claim.summary}` };
    },
  }),
});

function checkEvidence(run: RunContext, cited: readonly string[]): { ok: boolean; detail: string } {
  if (cited.length === 0) return { ok: false, detail: 'it cites no tool calls as evidence' };
  const results = run.trace.of('tool_result').filter((event) => event.attempt === run.attempt);
  const byId = new Map(results.map((result) => [result.callId, result]));
  const unknown = cited.filter((id) => !byId.has(id));
  if (unknown.length > 0) return { ok: false, detail: `it cites tool calls that were not made: ${unknown.join(', ')}` };
  for (const id of cited) {
    const result = byId.get(id)!;
    const later = results.filter((event) => event.seq > result.seq);
    for (const [story, voted] of votesShown(result)) {
      if (voted && !later.some((event) => votesShown(event).get(story) === false)) return { ok: true, detail: `${id} shows story ${story} upvoted` };
    }
  }
  return { ok: false, detail: `none of the cited calls (${cited.join(', ')}) shows an upvote that holds` };
}

/** What a tool result shows about votes: story id → voted or not. */
function votesShown(result: ToolResult): Map<string, boolean> {
  const shown = new Map<string, boolean>();
  const output = result.output;
  if (!result.ok || !output) return shown;
  if (result.name === 'click') {
    const id = /#up_(\d+)/.exec(String(output.clicked))?.[1];
    // A vote link that leads to HN's login page did not vote.
    if (id) shown.set(id, !/^\/(?:login|vote)$/.test(pathOf(output.url)));
  }
  if (result.name === 'has_class' && output.className === 'nosee') {
    const id = /^#up_(\d+)$/.exec(String(output.selector))?.[1];
    if (id) shown.set(id, output.present === true);
  }
  if (result.name === 'get_stories' && Array.isArray(output.stories)) {
    for (const story of output.stories as Array<{ id?: unknown; voted?: unknown }>) shown.set(String(story.id), story.voted === true);
  }
  return shown;
}

function pathOf(url: unknown): string {
  try {
    return new URL(String(url)).pathname;
  } catch {
    return '';
  }
}
