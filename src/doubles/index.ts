/** The doubles that work on any site: plans rehearsed from a task's reference, and the doubles that follow them. */
export { FOLLOWERS, onAnySite } from './follow.ts';
export { planFor, registerPlan, type Plan, type PlannedMove } from './plans.ts';
export { rehearse, rehearseOnce } from './rehearsal.ts';
