import type { Agent } from '../eval/agent.ts';

export interface CommandAgentOptions {
  /** The agent's name in cells (default: the command's file name). */
  name?: string;
  /** Where the command runs (default: the current folder). */
  cwd?: string;
  /** More environment for the command (PATH and HOME are passed; nothing else of harness-eval's own environment is). */
  env?: Record<string, string>;
  /** The command's own time limit; the test's timeout also stops it. At either, its whole process group is killed. */
  timeoutMs?: number;
  /** Give the command the site's account as HN_USERNAME / HN_PASSWORD. */
  account?: boolean;
}

/**
 * CONTRACT STUB (helper C implements): a command in any language as the agent, started with
 * HARNESS_TASK, HARNESS_SITE_URL, HARNESS_CDP_URL, OPENAI_BASE_URL, OPENAI_API_KEY, OLLAMA_HOST and
 * HARNESS_CLAIM_FILE; it writes its claim as JSON to HARNESS_CLAIM_FILE.
 */
export function commandAgent(_argv: readonly string[], _options: CommandAgentOptions = {}): Agent {
  throw new Error('commandAgent: not implemented yet');
}
