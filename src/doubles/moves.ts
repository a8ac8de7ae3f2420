import type { Step } from './history.ts';
import type { Action, Move } from './toolbox.ts';

/** The doubles' vocabulary of moves, shared by every policy: a move, a claim, the latest step of a kind. */

export const act = (name: Move, args: Record<string, unknown> = {}): Action => ({ name, args });

export const finish = (success: boolean, summary: string, evidence?: string[], answer?: string) =>
  act('finish', { success, summary, ...(evidence && { evidence }), ...(answer !== undefined && { answer }) });

export const did = (steps: readonly Step[], name: Move) => steps.findLast((step) => step.name === name);

/** Whether a step made exactly this move (the same tool, the same arguments). */
export const sameMove = (step: Step, move: Action) => step.name === move.name && JSON.stringify(step.args) === JSON.stringify(move.args);
