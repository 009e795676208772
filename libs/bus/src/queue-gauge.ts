import { Type } from '@sinclair/typebox';
import type { Bus } from './bus.js';
import { natsHandles } from './bus.js';

/** Admission settings, read alike by the gateway and the dispatcher (docs/operations.md#admission). */
export const admissionSettings = {
  ADMISSION_NOTICE_WAIT_MS: Type.Integer({
    default: 10_000,
    minimum: 0,
    description: "from this expected queue wait on, a task's accepted event carries queue: { jobs_ahead, estimated_wait_ms }",
  }),
  ADMISSION_MAX_WAIT_MS: Type.Integer({
    default: 0,
    minimum: 0,
    description:
      "above this expected queue wait a submission is refused overloaded with retry_after_ms; 0: only a wait past the task's own deadline (budget.timeout_ms, else TASK_TIMEOUT_MS) refuses it",
  }),
  // Here, not in the dispatcher's settings alone: the gateway refuses by the same deadline.
  TASK_TIMEOUT_MS: Type.Integer({ default: 1_800_000, minimum: 1000, description: 'deadline of a task that sets no budget.timeout_ms' }),
};

/** The bounds of the settings above. */
export const admissionBounds = (c: { ADMISSION_NOTICE_WAIT_MS: number; ADMISSION_MAX_WAIT_MS: number }): AdmissionBounds => ({
  noticeWaitMs: c.ADMISSION_NOTICE_WAIT_MS,
  maxWaitMs: c.ADMISSION_MAX_WAIT_MS,
});

/** How often the gauge reads the runtime job consumer, and over how long it measures the start rate. */
export const QUEUE_SAMPLE_MS = 2000;
export const QUEUE_RATE_WINDOW_MS = 30_000;

/** How far behind the runtimes are: jobs not yet started, and how long a new one would wait. */
export interface QueueEstimate {
  /** Runtime jobs in the stream no runtime has taken yet. */
  jobs_ahead: number;
  /** jobs_ahead over the rate runtimes took jobs at lately; null while none was taken in the window. */
  estimated_wait_ms: number | null;
}

/** What admission makes of a submission: admit (with the queue when it is worth telling), or refuse for now. */
export type Admission = { admit: true; queue?: QueueEstimate } | { admit: false; queue: QueueEstimate; retryAfterMs: number };

export interface AdmissionBounds {
  /** ADMISSION_NOTICE_WAIT_MS: from this expected wait on, the accepted event carries the queue. */
  noticeWaitMs: number;
  /** ADMISSION_MAX_WAIT_MS: above this expected wait a submission is refused `overloaded` (0: never). */
  maxWaitMs: number;
}

/**
 * The one admission rule, applied by the gateway before it publishes and by the dispatcher to
 * what arrives on the bus. A task is refused only on a measured wait (runtimes are taking jobs,
 * just not fast enough): with none taken lately (every runtime down) it is accepted durably and
 * waits, since refusing would lose nothing but tell the submitter nothing true either. A task
 * whose own deadline is shorter than the bound is refused at its deadline: it would time out queued.
 */
export function admissionOf(q: QueueEstimate | undefined, bounds: AdmissionBounds, taskTimeoutMs?: number): Admission {
  if (!q || q.jobs_ahead === 0) return { admit: true };
  const wait = q.estimated_wait_ms;
  const bound = Math.min(bounds.maxWaitMs > 0 ? bounds.maxWaitMs : Infinity, taskTimeoutMs ?? Infinity);
  if (wait !== null && wait > bound) return { admit: false, queue: q, retryAfterMs: Math.max(1000, Math.ceil(wait - bound)) };
  return wait === null || wait >= bounds.noticeWaitMs ? { admit: true, queue: q } : { admit: true };
}

/**
 * Samples the runtime job consumers, both lanes (a consumer-info request each every QUEUE_SAMPLE_MS,
 * shared by all submissions of the process), and estimates the queue from their pending counts and
 * the rate their delivered sequences grew at over the last QUEUE_RATE_WINDOW_MS. Redeliveries count as starts: under
 * a crash loop the estimate is optimistic, never a reason to refuse more. Jobs that wait inside the
 * runtimes for an LLM permit are not counted (see docs/operations.md#admission).
 */
export class QueueGauge {
  private samples: { at: number; delivered: number; pending: number }[] = [];
  private latest: QueueEstimate | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly o: { sampleMs?: number; windowMs?: number; now?: () => number } = {},
  ) {}

  start(): this {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.o.sampleMs ?? QUEUE_SAMPLE_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The last estimate; undefined until the first sample answered (or while the consumer does not exist). */
  estimate(): QueueEstimate | undefined {
    return this.latest;
  }

  private async sample(): Promise<void> {
    const now = (this.o.now ?? Date.now)();
    const { jsm } = natsHandles(this.bus);
    const { streams, consumers } = this.bus.subjects;
    // A new task's opening job waits behind both lanes: the ahead lane is pulled first.
    const [main, ahead] = await Promise.all([
      jsm.consumers.info(streams.runtimeJobs, consumers.runtimeJobs).catch(() => undefined),
      jsm.consumers.info(streams.runtimeJobsAhead, consumers.runtimeJobsAhead).catch(() => undefined),
    ]);
    if (!main) return;
    const pending = main.num_pending + (ahead?.num_pending ?? 0);
    this.samples.push({ at: now, delivered: main.delivered.consumer_seq + (ahead?.delivered.consumer_seq ?? 0), pending });
    const windowMs = this.o.windowMs ?? QUEUE_RATE_WINDOW_MS;
    while (this.samples.length > 2 && this.samples[0]!.at < now - windowMs) this.samples.shift();
    // Only intervals that began with jobs waiting measure how fast runtimes take them: an idle
    // stretch says nothing of their pace, and would make the first burst after it look hopeless.
    let started = 0;
    let busyMs = 0;
    for (let i = 1; i < this.samples.length; i++) {
      const [a, b] = [this.samples[i - 1]!, this.samples[i]!];
      if (a.pending === 0) continue;
      started += b.delivered - a.delivered;
      busyMs += b.at - a.at;
    }
    // A pace measured over less than three samples is mostly the phase of the samples against the
    // burst that filled the queue (its first jobs not published yet, the runtimes not yet pulling).
    const perMs = busyMs >= 3 * (this.o.sampleMs ?? QUEUE_SAMPLE_MS) ? started / busyMs : 0;
    this.latest = { jobs_ahead: pending, estimated_wait_ms: perMs > 0 ? Math.round(pending / perMs) : null };
  }
}
