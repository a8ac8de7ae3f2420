import type { WireMessage } from '../models/scripted/endpoint.ts';

/**
 * A task's reference solution as the page-level moves it made (rehearsal.ts records them on a
 * scratch instance of the run's site), for the doubles that follow it on any site (follow.ts).
 */

/** One move of the reference, in the browser tools' own words: a `selector` is one `page.locator()` reads (a Locator's own, `internal:role=…`, included). */
export interface PlannedMove {
  name: 'navigate' | 'click' | 'fill';
  args: { url: string } | { selector: string } | { selector: string; value: string };
  /** Whether the site saw an action during it (its classifier named a request): what a claim cites. */
  acted: boolean;
}

export interface Plan {
  /** The task's prompt as the run reads it: the plan of a conversation whose user message holds it. */
  prompt: string;
  /** The site's own origin: the moves' addresses are on it. */
  origin: string;
  moves: PlannedMove[];
  /** Why the moves cannot be followed (no reference, a move no browser tool makes, a reference that failed), or undefined. */
  unusable?: string;
  /** Lines of page text the reference's work made appear and disappear on the page it ended on: what a follower looks for before it claims. */
  shows: string[];
  hides: string[];
  /** The reference's answer (an information task), or why it found the task impossible. */
  answer?: string;
  impossible?: string;
}

/** The plans of this worker, by prompt: a run's rehearsal registers its plan before its agent starts. */
const plans = new Map<string, Plan>();

export function registerPlan(plan: Plan): void {
  plans.delete(plan.prompt);
  plans.set(plan.prompt, plan);
}

/**
 * The plan of the task a conversation is about: the one whose prompt its first user message holds
 * (an agent may wrap the task in words of its own); the longest, where several prompts fit.
 */
export function planFor(messages: readonly WireMessage[]): Plan | undefined {
  const first = messages.find((message) => message.role === 'user');
  if (!first) return undefined;
  const content = first.content ?? '';
  const text = typeof content === 'string' ? content : content.map((part) => part.text ?? '').join('');
  let found: Plan | undefined;
  for (const plan of plans.values()) if (text.includes(plan.prompt) && plan.prompt.length > (found?.prompt.length ?? -1)) found = plan;
  return found;
}
