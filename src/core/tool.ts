import type { z } from 'zod';
import type { ToolCall } from './model.ts';

/** What a tool answers: a JSON-serialisable observation for the model and the trace. */
export type ToolOutput = Record<string, unknown>;

/** A tool the built-in harness offers a model: the browser's, a layer's, or a site kit's own (`Site.tools`). */
export interface Tool<P extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: P;
  /** `act` tools change the world (click, fill, navigate); `read` tools only look. */
  effect: 'read' | 'act';
  /** The observation's shape, for layers that validate what tools answer. */
  output?: z.ZodType;
  /**
   * The output's fields that hold text the page wrote (so anyone who can publish on the web), as
   * dotted paths with array indices (`stories.3.title`): what the `observations` layer marks untrusted.
   */
  pageText?: RegExp;
  /** Kept out of the schemas the model is offered, but callable (code mode's programs call them). */
  hidden?: boolean;
  /** The most a call may take, when the tool has a limit of its own (a program's); the harness's limits apply too. */
  timeoutMs?: number;
  /** The registry passes the call being run, for a tool that makes calls of its own under its id. */
  execute(args: z.output<P>, call?: ToolCall): Promise<ToolOutput>;
}
