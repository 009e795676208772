import { JOB_PRIORITY_MAX, type RuntimeJob } from '@hermes/contracts';

/**
 * The semaphore priority of a job's LLM calls: the dispatcher's, one more on a redelivery (a
 * retry of work already under way goes ahead of new tasks, whatever the dispatcher knew).
 */
export function callPriority(job: RuntimeJob, attempt: number): number {
  return Math.min(JOB_PRIORITY_MAX, (job.priority ?? 1) + (attempt > 1 ? 1 : 0));
}
