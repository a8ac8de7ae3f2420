import { callFor } from '../../../doubles/calls.ts';
import { readHistory, type Policy } from '../../../doubles/history.ts';
import type { ScriptedDouble } from '../../../models/scripted/endpoint.ts';
import { doubles } from './doubles.ts';
import { snapshotDoubles } from './snapshot.ts';
import { hnDialect } from './toolbox.ts';

/** A policy as the scripted endpoint calls it: the conversation read into a history, its move made with the tools offered. */
function double(policy: Policy): ScriptedDouble {
  return (messages, tools) => {
    const history = readHistory(messages, tools, hnDialect);
    return callFor(policy(history), history);
  };
}

/**
 * HN's scripted doubles (`scripted:diligent`, …): they know HN's pages, so they are the kit's. The shell registers them.
 * The `snapshot-` pair speak Playwright MCP's tools as an MCP host offers them (snapshot.ts).
 */
export const hnDoubles: Readonly<Record<string, ScriptedDouble>> = {
  ...Object.fromEntries(Object.entries(doubles).map(([name, policy]) => [name, double(policy)])),
  ...snapshotDoubles,
};
