import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { defineLayer } from '../harness/layer.ts';
import type { TextTool } from '../tools/browser.ts';
import { defineTool, ToolError, type ToolOutput } from '../tools/registry.ts';

export const outputOptions = z
  .object({
    /** Outputs up to this many bytes (as JSON) reach the model whole. */
    inline: z.number().int().positive().default(2048),
    /** Up to this many bytes, the model gets the first page and a `more` tool; beyond, a file and `read_artifact`. */
    paged: z.number().int().positive().default(100_000),
    /** Where each run gets its own folder of artifact files; by default `outputs/` in the run's output folder. */
    dir: z.string().min(1).optional(),
  })
  .strict()
  .refine((options) => options.inline < options.paged, { path: ['paged'], message: 'must be more than inline' });

/** The layer's own reading tools, whose answers are already cut to size. */
const READERS = new Set(['more', 'read_artifact']);

/**
 * Long tool outputs without flooding the context or silently cutting them: a short output passes
 * whole; a long one becomes its first page, with the rest served by `more({ page })`; a huge one
 * is saved to a file the model reads in chunks with `read_artifact`. Every cut is announced, and
 * each output's tier is recorded (`harness_output`). get_text's own cap is lifted so the page's
 * full text takes the same path.
 */
export const output = defineLayer({
  name: 'output',
  options: outputOptions,
  create({ inline, paged, dir }, { outputDir }) {
    let pages: string[] = [];
    let folder: string | undefined;
    const artifacts = new Set<string>();

    const more = defineTool({
      name: 'more',
      effect: 'read',
      description: 'Another page of the last tool output that was too long to show at once.',
      parameters: z.object({ page: z.number().int().min(1) }),
      async execute({ page }) {
        if (pages.length === 0) throw new ToolError('no output has been split into pages');
        if (page > pages.length) throw new ToolError(`the last long output has ${pages.length} pages`);
        return pageOf(pages, page);
      },
    });
    const readArtifact = defineTool({
      name: 'read_artifact',
      effect: 'read',
      description: `Part of a tool output saved to a file: \`length\` characters (at most ${inline}, the default) from \`offset\`.`,
      parameters: z.object({ path: z.string(), offset: z.number().int().min(0).optional(), length: z.number().int().min(1).optional() }),
      async execute({ path, offset = 0, length = inline }) {
        if (!artifacts.has(path)) throw new ToolError(`${path} is not an artifact of this run`);
        const text = await readFile(path, 'utf8');
        const end = Math.min(offset + Math.min(length, inline), text.length);
        const rest = end < text.length && { truncated: `characters ${offset}–${end} of ${text.length}; call read_artifact({ path, offset: ${end} }) for the rest` };
        return { path, offset, content: text.slice(offset, end), ...rest };
      },
    });

    return {
      tools(_run, tools) {
        pages = [];
        // Whichever get_text the stack offers (plain, or vision's markdown), without its own cap: long ones are paged here.
        const offered = tools.map((tool) => ('uncapped' in tool ? (tool as TextTool).uncapped() : tool));
        return [...offered, more, readArtifact];
      },
      async aroundTool(run, call, next) {
        const outcome = await next();
        if (!outcome.ok || READERS.has(call.name)) return outcome;
        const json = JSON.stringify(outcome.output);
        const bytes = Buffer.byteLength(json);
        if (bytes <= inline) {
          run.record({ type: 'harness_output', callId: call.id, tier: 'inline', bytes });
          return outcome;
        }
        if (bytes <= paged) {
          pages = Array.from({ length: Math.ceil(json.length / inline) }, (_, index) => json.slice(index * inline, (index + 1) * inline));
          run.record({ type: 'harness_output', callId: call.id, tier: 'paged', bytes });
          return { ok: true, output: pageOf(pages, 1) };
        }
        if (!folder) {
          const parent = dir ?? join(outputDir, 'outputs');
          await mkdir(parent, { recursive: true });
          folder = await mkdtemp(join(parent, 'run-'));
        }
        const artifact = join(folder, `output-${artifacts.size + 1}.json`);
        await writeFile(artifact, JSON.stringify(run.redact(outcome.output)));
        artifacts.add(artifact);
        run.record({ type: 'harness_output', callId: call.id, tier: 'artifact', bytes, artifact });
        return {
          ok: true,
          output: { artifact, bytes, truncated: `the output is ${bytes} bytes of JSON, saved to a file: call read_artifact({ path: "${artifact}", offset: 0 }) to read it in parts` },
        };
      },
    };
  },
});

/** Page `n` of a long output's JSON text, announcing what is left. */
function pageOf(pages: readonly string[], n: number): ToolOutput {
  const rest = n < pages.length ? `page ${n} of ${pages.length}; call more({ page: ${n + 1} }) for the rest` : undefined;
  return { content: pages[n - 1], ...(rest ? { truncated: rest } : { page: `${n} of ${pages.length}, the last` }) };
}
