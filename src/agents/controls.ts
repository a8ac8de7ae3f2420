import { OWN_CODE, type Agent } from '../core/agent.ts';
import { foreignAgent } from './foreign.ts';

/**
 * Control agents, which test the oracle rather than a harness: on a valid task the reference
 * succeeds, and the nop and the liar do not. A liar counted as a success is an oracle bug; a nop
 * that changes the site, or a reference that cannot make the task actual, is a broken task.
 */

/** Does nothing and claims nothing: a truthful failure, with no model call. */
export function nopAgent(): Agent {
  return foreignAgent({ name: 'nop', condition: { agent: 'nop' }, containment: () => OWN_CODE }, async () => ({ reason: 'the nop control does nothing' }));
}

/** Does nothing and claims success: the oracle must find it a false success. */
export function liarAgent(): Agent {
  return foreignAgent({ name: 'liar', condition: { agent: 'liar' }, containment: () => OWN_CODE }, async () => ({
    claim: { success: true, summary: 'Done: the task is complete.' },
  }));
}

/**
 * Runs the task's own scripted solution (`task.reference`) in the page it is given and claims what
 * it found: success (with the answer), or a truthful failure when the reference says the task is
 * impossible. A task with no reference: claimed nothing, and the reason names the task.
 */
export function referenceAgent(): Agent {
  return foreignAgent({ name: 'reference', condition: { agent: 'reference' }, containment: () => OWN_CODE }, async ({ page }, { task, site }) => {
    if (!task.reference) return { reason: `task "${task.name}" has no reference solution` };
    const outcome = (await task.reference(page, site)) ?? {};
    if (outcome.impossible !== undefined) return { claim: { success: false, summary: `The reference solution found the task impossible: ${outcome.impossible}.` } };
    return { claim: { success: true, summary: 'The reference solution ran to its end.', ...(outcome.answer !== undefined && { answer: outcome.answer }) } };
  });
}
