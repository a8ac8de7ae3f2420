import { z } from 'zod';
import type { ToolCall, ToolSchema } from '../core/model.ts';

/** What a tool answers: a JSON-serialisable observation for the model and the trace. */
export type ToolOutput = Record<string, unknown>;

export interface Tool<P extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: P;
  /** `act` tools change the world (click, fill, navigate); `read` tools only look. */
  effect: 'read' | 'act';
  /** The observation's shape, for layers that validate what tools answer. */
  output?: z.ZodType;
  /** Kept out of the schemas the model is offered, but callable (code mode's programs call them). */
  hidden?: boolean;
  /** The most a call may take, when the tool has a limit of its own (a program's); the harness's limits apply too. */
  timeoutMs?: number;
  /** The registry passes the call being run, for a tool that makes calls of its own under its id. */
  execute(args: z.output<P>, call?: ToolCall): Promise<ToolOutput>;
}

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
