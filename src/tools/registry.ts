import { z } from 'zod';
import type { ToolCall, ToolSchema } from '../core/model.ts';
import type { Tool, ToolOutput } from '../core/tool.ts';

export type { Tool, ToolOutput } from '../core/tool.ts';

/** A tool's own failure, reported to the model as an observation (not a crash). */
export class ToolError extends Error {
  override name = 'ToolError';
}

export type ToolOutcome =
  | { ok: true; output: ToolOutput }
  | { ok: false; kind: 'unknown_tool' | 'invalid_json' | 'invalid_arguments' | 'tool_error' | 'denied' | 'timeout' | 'warning' | 'awaiting_approval'; error: string };

/**
 * A tool, typed from its parameters' schema: `execute` gets the parsed arguments. A layer offers it
 * from its `tools` hook; the schema is what the model sees, and checks each call before `execute`.
 */
export function defineTool<P extends z.ZodType>(tool: Tool<P>): Tool<P> {
  return tool;
}

/** The tools offered to a model: their schemas, and one safe way to run a call the model wrote. */
export class ToolRegistry {
  private readonly byName: Map<string, Tool>;
  private cachedSchemas?: ToolSchema[];

  constructor(tools: readonly Tool[]) {
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  /** The tools as models see them; computed once, the same on every turn. */
  schemas(): ToolSchema[] {
    this.cachedSchemas ??= [...this.byName.values()].filter((tool) => !tool.hidden).map((tool) => {
      const { $schema: _, ...parameters } = z.toJSONSchema(tool.parameters) as Record<string, unknown>;
      return { name: tool.name, description: tool.description, parameters };
    });
    return this.cachedSchemas;
  }

  /** Never throws: unknown tools, bad JSON, schema failures and tool errors become outcomes. */
  async call(call: ToolCall): Promise<ToolOutcome> {
    const tool = this.byName.get(call.name);
    if (!tool) return { ok: false, kind: 'unknown_tool', error: `unknown tool "${call.name}" (tools: ${this.names.join(', ')})` };
    let raw: unknown;
    try {
      raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (error) {
      return { ok: false, kind: 'invalid_json', error: `arguments are not valid JSON: ${(error as Error).message}` };
    }
    const parsed = tool.parameters.safeParse(raw);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`);
      return { ok: false, kind: 'invalid_arguments', error: `invalid arguments for ${call.name}: ${problems.join('; ')}` };
    }
    try {
      return { ok: true, output: await tool.execute(parsed.data, call) };
    } catch (error) {
      return { ok: false, kind: 'tool_error', error: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
    }
  }
}
