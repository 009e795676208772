import type { KV } from '@nats-io/kv';
import { isCasConflict, retryThroughOutage } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import { decodeStored, StoredCheckpoint } from '@hermes/contracts';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/**
 * Everything the loop needs to resume a job after a crash without repeating a finished LLM call:
 * the stored shape (`StoredCheckpoint` in the contracts), with the messages typed as the OpenAI
 * SDK's, which the contracts do not depend on (their schema checks what the loop relies on).
 */
export type Checkpoint = Omit<StoredCheckpoint, 'messages'> & { messages: ChatCompletionMessageParam[] };

/** Another runtime wrote the checkpoint since we read it: it has taken the job over. */
export class CheckpointConflictError extends Error {
  readonly code = 'checkpoint_conflict';
  constructor(
    readonly jobId: string,
    options?: { cause?: unknown },
  ) {
    super(`job ${jobId} was taken over by another runtime`, options);
    this.name = new.target.name;
  }
}

/** Where the loop writes its checkpoint: the handle of one delivery of one job. */
export interface CheckpointWriter {
  save(cp: Checkpoint): Promise<void>;
  /** Throws CheckpointConflictError when another delivery may have taken the job over: asked before each LLM call. */
  stillHeld(): Promise<void>;
}

/**
 * Checkpoints in JetStream KV, one key per job, written with compare-and-set. The fence is the
 * revision one delivery last read or wrote, held by that delivery's handle (never shared by two
 * runs in one process): if a runtime that was presumed dead (its job redelivered) wakes up, its
 * next write fails and it stops.
 */
export class CheckpointStore {
  /**
   * `outage`: how long a write waits out JetStream being away (an election, a restart) before it
   * fails; default none. Waiting costs a stall, failing costs the LLM answer the checkpoint holds:
   * the redelivered job would ask that step again. `recheckAfterMs`: how long after the fence was
   * last confirmed the loop reads it again before an LLM call (half the ack wait: no redelivery can
   * have happened sooner unless heartbeats stopped).
   */
  constructor(
    private readonly kv: KV,
    private readonly outage: OutageWait = { budgetMs: 0 },
  ) {}

  /** A handle for one delivery of a job: its own fence, from its own `load`. */
  open(jobId: string): JobCheckpoint {
    return new JobCheckpoint(this.kv, jobId, this.outage);
  }
}

interface OutageWait {
  budgetMs: number;
  logger?: Logger;
  recheckAfterMs?: number;
}

export class JobCheckpoint implements CheckpointWriter {
  private revision = 0;

  constructor(
    private readonly kv: KV,
    readonly jobId: string,
    private readonly outage: OutageWait = { budgetMs: 0 },
  ) {}

  /** When this delivery last saw the fence as its own. */
  private confirmedAt = 0;

  /**
   * The job's checkpoint; a record that fails its schema throws StoredStateError (`corrupt_state`,
   * not retryable). `claim` (a redelivery): the record is written back unchanged, so the fence
   * moves at once and a holder that was presumed dead (paused, cut off) sees it before its next LLM
   * call instead of asking a step this delivery asks too.
   */
  async load(o: { claim?: boolean } = {}): Promise<Checkpoint | undefined> {
    const e = await this.kv.get(key(this.jobId));
    this.confirmedAt = Date.now();
    if (!e || e.operation !== 'PUT') {
      this.revision = 0;
      return undefined;
    }
    const checkpoint = decodeStored(StoredCheckpoint, e) as Checkpoint;
    this.revision = e.revision;
    if (o.claim) await this.save(checkpoint);
    return checkpoint;
  }

  async stillHeld(): Promise<void> {
    if (Date.now() - this.confirmedAt < (this.outage.recheckAfterMs ?? Infinity)) return;
    const e = await retryThroughOutage(() => this.kv.get(key(this.jobId)), {
      ...this.outage,
      what: 'reading the checkpoint fence',
      context: { job_id: this.jobId },
    });
    const stored = e?.operation === 'PUT' ? e.revision : 0;
    if (stored !== this.revision) throw new CheckpointConflictError(this.jobId);
    this.confirmedAt = Date.now();
  }

  save(cp: Checkpoint): Promise<void> {
    // A repeat is safe: a write that landed with its reply lost is recognised below as our own.
    return retryThroughOutage(() => this.write(cp), { ...this.outage, what: 'writing the checkpoint', context: { job_id: cp.job_id, step: cp.step } });
  }

  private async write(cp: Checkpoint): Promise<void> {
    const k = key(cp.job_id);
    const value = JSON.stringify(cp);
    try {
      this.revision = this.revision === 0 ? await this.kv.create(k, value) : await this.kv.update(k, value, this.revision);
      this.confirmedAt = Date.now();
    } catch (err) {
      if (!isCasConflict(err)) throw err;
      // Our own write may have landed with its reply lost (a reconnect): then it is ours to continue.
      const stored = await this.kv.get(k);
      if (stored?.operation === 'PUT' && stored.string() === value) {
        this.revision = stored.revision;
        this.confirmedAt = Date.now();
        return;
      }
      throw new CheckpointConflictError(cp.job_id, { cause: err });
    }
  }
}

const key = (jobId: string) => `job.${jobId.replace(/[^A-Za-z0-9_=-]/g, '_')}`;
