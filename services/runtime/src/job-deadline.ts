import { wireError, type RuntimeJob, type WireError } from '@hermes/contracts';

/**
 * A job's bound on its running time (`timeout_ms`, the dispatcher's SUBTASK_TIMEOUT_MS), counted
 * from when this runtime starts it: time spent queued behind the LLM cap is not running time, and
 * counting it made every task fail once the queue was longer than the timeout (issue 20). A
 * redelivery starts its own clock, as it runs the job anew from its checkpoint.
 */
export class JobDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(private readonly job: Pick<RuntimeJob, 'job_id' | 'subtask_id' | 'timeout_ms'>) {
    if (job.timeout_ms === undefined) return;
    this.timer = setTimeout(() => this.controller.abort(), job.timeout_ms);
    this.timer.unref();
  }

  /** Aborted when the job has run for `timeout_ms`; undefined for a job without a bound. */
  get signal(): AbortSignal | undefined {
    return this.timer ? this.controller.signal : undefined;
  }

  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  /** The retryable error the job's result carries once the bound has passed. */
  error(): WireError {
    return wireError('subtask_timeout', `subtask ${this.job.subtask_id} ran longer than ${this.job.timeout_ms} ms`, {
      job_id: this.job.job_id,
      timeout_ms: this.job.timeout_ms,
    });
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** Either signal, when both are there. */
export function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (!a || !b) return a ?? b;
  return AbortSignal.any([a, b]);
}
