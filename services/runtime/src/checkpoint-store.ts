import type { KV } from '@nats-io/kv';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** Everything the loop needs to resume a job after a crash without repeating a finished LLM call. */
export interface Checkpoint {
  v: 1;
  job_id: string;
  /** LLM calls completed. */
  step: number;
  /** The conversation after the system prompt: opening messages, assistant turns, tool results. */
  messages: ChatCompletionMessageParam[];
  usage: { input_tokens: number; output_tokens: number };
  /** Tool calls made so far, as `name + canonical arguments`, for the loop detector. */
  calls: string[];
  /** An assistant turn whose tool calls have not all returned yet (they run again on resume; the toolbus replays finished ones). */
  pending: boolean;
  /** The final turn was written to the session (so a redelivery does not write it twice). */
  session_written?: boolean;
}

/** Another runtime wrote the checkpoint since we read it: it has taken the job over. */
export class CheckpointConflictError extends Error {
  readonly code = 'checkpoint_conflict';
  constructor(readonly jobId: string, options?: { cause?: unknown }) {
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

  async load(): Promise<Checkpoint | undefined> {
    const e = await this.kv.get(key(this.jobId));
    if (!e || e.operation !== 'PUT') {
      this.revision = 0;
      return undefined;
    }
    this.revision = e.revision;
    return e.json<Checkpoint>();
  }

  async save(cp: Checkpoint): Promise<void> {
    const k = key(cp.job_id);
    const value = JSON.stringify(cp);
    try {
      this.revision = this.revision === 0 ? await this.kv.create(k, value) : await this.kv.update(k, value, this.revision);
    } catch (err) {
      if (!/wrong last sequence|key exists/i.test(String((err as Error).message))) throw err;
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
