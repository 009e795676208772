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
  constructor(readonly jobId: string, options?: { cause?: unknown }) {
    super(`job ${jobId} was taken over by another runtime`, options);
    this.name = new.target.name;
  }
}

/**
 * Checkpoints in JetStream KV, one key per job, written with compare-and-set: if a runtime that
 * was presumed dead (its job redelivered) wakes up, its next write fails and it stops.
 */
export class CheckpointStore {
  private readonly revisions = new Map<string, number>();

  constructor(private readonly kv: KV) {}

  /** The job's checkpoint; a record that fails its schema throws StoredStateError (`corrupt_state`, not retryable). */
  async load(jobId: string): Promise<Checkpoint | undefined> {
    const e = await this.kv.get(key(jobId));
    if (!e || e.operation !== 'PUT') {
      this.revisions.set(jobId, 0);
      return undefined;
    }
    const checkpoint = decodeStored(StoredCheckpoint, e) as Checkpoint;
    this.revisions.set(jobId, e.revision);
    return checkpoint;
  }

  async save(cp: Checkpoint): Promise<void> {
    const k = key(cp.job_id);
    const expected = this.revisions.get(cp.job_id) ?? 0;
    try {
      const revision = expected === 0 ? await this.kv.create(k, JSON.stringify(cp)) : await this.kv.update(k, JSON.stringify(cp), expected);
      this.revisions.set(cp.job_id, revision);
    } catch (err) {
      if (isCasConflict(err)) throw new CheckpointConflictError(cp.job_id, { cause: err });
      throw err;
    }
  }

  forget(jobId: string): void {
    this.revisions.delete(jobId);
  }
}

const key = (jobId: string) => `job.${jobId.replace(/[^A-Za-z0-9_=-]/g, '_')}`;
