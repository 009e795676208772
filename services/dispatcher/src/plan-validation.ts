import { validate, Plan, type PlanSubtask, type SubtaskState } from '@hermes/contracts';

export interface PlanRules {
  /** Most subtasks one plan (or one re-plan) may have (PLAN_MAX_SUBTASKS). */
  maxSubtasks: number;
  /** The task's tool allow-list; absent = any tool the user may use. */
  allowedTools?: readonly string[] | undefined;
  /** Re-plans: the subtasks already in the task. New ids must differ from all of them; deps may name the succeeded ones. */
  existing?: readonly SubtaskState[];
}

export type PlanCheck = { ok: true; plan: Plan } | { ok: false; errors: string[] };

/**
 * Checks a planner's answer: the Plan schema, unique ids, dependencies that exist, no cycles, the
 * size limit and tools within the allow-list. Errors are sentences the planner can act on, since
 * an invalid plan is sent back to it once with them.
 */
export function checkPlan(candidate: unknown, rules: PlanRules): PlanCheck {
  if (candidate === undefined) return { ok: false, errors: ['the answer contains no JSON object; answer with {"subtasks": [...]} only'] };
  const checked = validate(Plan, candidate);
  if (!checked.ok) return { ok: false, errors: checked.issues.slice(0, 20).map((i) => `${i.path || '/'}: ${i.message}`) };
  const plan = checked.value;
  const errors: string[] = [];
  if (plan.subtasks.length > rules.maxSubtasks) errors.push(`the plan has ${plan.subtasks.length} subtasks; at most ${rules.maxSubtasks} are allowed`);

  const existing = new Map((rules.existing ?? []).map((s) => [s.id, s]));
  const ids = new Set<string>();
  for (const s of plan.subtasks) {
    if (ids.has(s.id)) errors.push(`subtask id "${s.id}" is used more than once`);
    else if (existing.has(s.id)) errors.push(`subtask id "${s.id}" is already taken by an earlier subtask; use a new id`);
    ids.add(s.id);
  }
  for (const s of plan.subtasks) {
    for (const dep of s.depends_on) {
      const earlier = existing.get(dep);
      if (ids.has(dep)) continue;
      if (!earlier) errors.push(`subtask "${s.id}" depends on unknown subtask "${dep}"`);
      else if (earlier.status !== 'succeeded')
        errors.push(`subtask "${s.id}" depends on "${dep}", which did not succeed; depend only on completed subtasks or new ones`);
    }
    if (s.depends_on.includes(s.id)) errors.push(`subtask "${s.id}" depends on itself`);
    if (rules.allowedTools) {
      const outside = (s.tools ?? []).filter((t) => !rules.allowedTools!.includes(t));
      if (outside.length) errors.push(`subtask "${s.id}" suggests tools outside the task's allow-list: ${outside.join(', ')}`);
    }
  }
  const cycle = findCycle(plan.subtasks);
  if (cycle) errors.push(`the dependencies form a cycle: ${cycle.join(' -> ')}`);
  return errors.length ? { ok: false, errors } : { ok: true, plan };
}

/** A dependency cycle among the new subtasks (ids in order, first repeated at the end), if any. */
export function findCycle(subtasks: readonly PlanSubtask[]): string[] | undefined {
  const deps = new Map(subtasks.map((s) => [s.id, s.depends_on]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const dep of deps.get(id) ?? []) {
      if (!deps.has(dep) || dep === id) continue;
      const found = visit(dep);
      if (found) return found;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const s of subtasks) {
    const found = visit(s.id);
    if (found) return found;
  }
  return undefined;
}
