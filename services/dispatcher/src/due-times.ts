import { isTerminalStatus, type TaskView } from '@hermes/contracts';

/**
 * When a task next needs a look without any event arriving, from its stored state alone — the
 * earliest of: its deadline (not while it waits for its user), an unanswered question's deadline,
 * a retry's back-off, a job claimed but not marked sent (`takeoverMs` after the task's last write:
 * a live replica marks it at once, so by then its claimer is gone), and for an ended task still
 * listed active the same grace before another replica announces the end for it. Undefined: nothing
 * is due until the task changes.
 */
export function dueAt(v: TaskView, takeoverMs: number): number | undefined {
  const lastWrite = Date.parse(v.updated_at);
  if (isTerminalStatus(v.status) || v.status === 'accepted') return lastWrite + takeoverMs;
  const times: number[] = [];
  if (v.deadline_at && v.status !== 'input_required') times.push(Date.parse(v.deadline_at));
  const plan = v.plan;
  const claimDue = (claimedAt: string | undefined, sent: string | undefined) => {
    if (claimedAt && !sent) times.push(Math.max(Date.parse(claimedAt), lastWrite) + takeoverMs);
  };
  if (plan?.job) claimDue(plan.job.claimed_at, plan.job.dispatched_at);
  for (const s of plan?.subtasks ?? []) {
    if (s.status === 'running') claimDue(s.claimed_at, s.dispatched_at);
    else if (s.status === 'input_required' && s.input) times.push(Date.parse(s.input.deadline_at));
    else if (s.status === 'pending' && s.retry_at) times.push(Date.parse(s.retry_at));
  }
  return times.length ? Math.min(...times) : undefined;
}
