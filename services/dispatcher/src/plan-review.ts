import { validate, ReviewVerdict, type CoordinationJob, type PlanState, type ReviewNote, type ReviewState, type TaskView } from '@hermes/contracts';

export type VerdictCheck = { ok: true; verdict: ReviewVerdict } | { ok: false; errors: string[] };

/**
 * Checks a reviewer's answer: the ReviewVerdict schema, and in a revise verdict ids that name
 * subtasks of the task, each once. Errors are sentences the reviewer can act on, since a
 * malformed verdict is sent back to it once with them.
 */
export function checkVerdict(candidate: unknown, subtaskIds: readonly string[]): VerdictCheck {
  const shape = '{"verdict":"accept","answer":"..."} or {"verdict":"revise","subtasks":[{"id":"...","notes":"..."}]}';
  if (candidate === undefined) return { ok: false, errors: [`the answer contains no JSON object; answer with ${shape} only`] };
  const checked = validate(ReviewVerdict, candidate);
  if (!checked.ok) return { ok: false, errors: [`the verdict is not ${shape}`, ...checked.issues.slice(0, 10).map((i) => `${i.path || '/'}: ${i.message}`)] };
  const verdict = checked.value;
  if (verdict.verdict === 'accept') return { ok: true, verdict };
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const s of verdict.subtasks) {
    if (!subtaskIds.includes(s.id)) errors.push(`subtask "${s.id}" is not a subtask of this task (its subtasks: ${subtaskIds.join(', ')})`);
    else if (seen.has(s.id)) errors.push(`subtask "${s.id}" is named more than once`);
    seen.add(s.id);
  }
  return errors.length ? { ok: false, errors } : { ok: true, verdict };
}

/**
 * The review a task still owes, if any: the one under way, or a new one when the submission
 * (`review: true`) or the planner's plan asked for it. Its rounds come from the submission or,
 * when it named none, REVIEW_ROUNDS.
 */
export function pendingReview(v: TaskView, reviewRounds: number): ReviewState | undefined {
  const review = v.plan?.review ?? (v.options?.review ? { rounds: v.options.review_rounds ?? reviewRounds, round: 0 } : undefined);
  return review && review.accepted === undefined ? review : undefined;
}

/** The review job of a round; attempt 2 carries what was wrong with the verdict of attempt 1. */
export function reviewJob(taskId: string, round: number, attempt: 1 | 2, now: number, errors?: string[]): CoordinationJob {
  return {
    job_id: `${taskId}-review${round}-${attempt}`,
    kind: 'review',
    attempt,
    claimed_at: new Date(now).toISOString(),
    ...(errors ? { errors } : {}),
  };
}

/**
 * Sends the named subtasks back: each is pending again with the reviewer's notes and the output
 * they are about, and runs once more; the others keep their outputs and do not run.
 */
export function sendBack(plan: PlanState, notes: readonly ReviewNote[], round: number): void {
  for (const note of notes) {
    const s = plan.subtasks.find((x) => x.id === note.id)!;
    s.revision = { round, notes: note.notes, previous_output: s.output ?? '' };
    s.status = 'pending';
    delete s.output;
    delete s.error;
    delete s.retry_at;
  }
}
