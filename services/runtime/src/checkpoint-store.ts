import type { KV } from '@nats-io/kv';
import { isCasConflict } from '@hermes/bus';
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
}

/**
 * Checkpoints in JetStream KV, one key per job, written with compare-and-set. The fence is the
 * revision one delivery last read or wrote, held by that delivery's handle (never shared by two
 * runs in one process): if a runtime that was presumed dead (its job redelivered) wakes up, its
 * next write fails and it stops.
 */
export class CheckpointStore {
  constructor(private readonly kv: KV) {}

  /** A handle for one delivery of a job: its own fence, from its own `load`. */
  open(jobId: string): JobCheckpoint {
    return new JobCheckpoint(this.kv, jobId);
  }
}

export class JobCheckpoint implements CheckpointWriter {
  private revision = 0;

  constructor(
    private readonly kv: KV,
    readonly jobId: string,
  ) {}

  /** The job's checkpoint; a record that fails its schema throws StoredStateError (`corrupt_state`, not retryable). */
  async load(): Promise<Checkpoint | undefined> {
    const e = await this.kv.get(key(this.jobId));
    if (!e || e.operation !== 'PUT') {
      this.revision = 0;
      return undefined;
    }
    const checkpoint = decodeStored(StoredCheckpoint, e) as Checkpoint;
    this.revision = e.revision;
    return checkpoint;
  }

  async save(cp: Checkpoint): Promise<void> {
    const k = key(cp.job_id);
    const value = JSON.stringify(cp);
    try {
      this.revision = this.revision === 0 ? await this.kv.create(k, value) : await this.kv.update(k, value, this.revision);
    } catch (err) {
      if (!isCasConflict(err)) throw err;
      // Our own write may have landed with its reply lost (a reconnect): then it is ours to continue.
      const stored = await this.kv.get(k);
      if (stored?.operation === 'PUT' && stored.string() === value) {
        this.revision = stored.revision;
        return;
      }
      throw new CheckpointConflictError(cp.job_id, { cause: err });
    }
  }
}

const key = (jobId: string) => `job.${jobId.replace(/[^A-Za-z0-9_=-]/g, '_')}`;
