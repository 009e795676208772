import type { KV } from '@nats-io/kv';
import { isCasConflict, retryThroughOutage } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import { randomBytes } from 'node:crypto';
import { decodeStored, StoredCheckpoint, StoredCheckpointHead } from '@hermes/contracts';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { headKey, TurnRecords, type TurnDelta } from './checkpoint-turns.js';

/**
 * Everything the loop needs to resume a job after a crash without repeating a finished LLM call:
 * the v1 stored shape (`StoredCheckpoint` in the contracts), with the messages typed as the OpenAI
 * SDK's, which the contracts do not depend on (their schema checks what the loop relies on). It is
 * stored as a head and turn records since v2; `v` is present only on a v1 record read back.
 */
export type Checkpoint = Omit<StoredCheckpoint, 'messages' | 'v'> & { v?: 1; messages: ChatCompletionMessageParam[] };

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
 * Checkpoints in JetStream KV. Since v2 a job's checkpoint is a small head record (key
 * `job.<job id>`, written with compare-and-set) and one turn record per save holding only what
 * that save added, so a step costs the same whatever the task's length. The fence is the head's
 * revision one delivery last read or wrote, held by that delivery's handle (never shared by two
 * runs in one process): if a runtime that was presumed dead (its job redelivered) wakes up, its
 * next head write fails and it stops; the turns it wrote before are under its own token, never
 * under the keys of the runtime that took over.
 */
export class CheckpointStore {
  constructor(private readonly o: CheckpointStoreOptions) {}

  /** A handle for one delivery of a job: its own fence, from its own `load`. */
  open(jobId: string): JobCheckpoint {
    return new JobCheckpoint({ ...this.o, jobId });
  }
}

export interface CheckpointStoreOptions {
  kv: KV;
  /** The bucket's name, for errors that name a record. */
  bucket: string;
  /** Contents above this many bytes go to blobs (INLINE_CONTENT_BYTES by default; a test lowers it). */
  inlineBytes?: number;
  /**
   * How long a write waits out JetStream being away (an election, a restart) before it fails;
   * default none. Waiting costs a stall, failing costs the LLM answer the checkpoint holds: the
   * redelivered job would ask that step again.
   */
  outageBudgetMs?: number;
  logger?: Logger;
  /**
   * How long after the fence was last confirmed the loop reads it again before an LLM call (half
   * the ack wait: no redelivery can have happened sooner unless heartbeats stopped); default never.
   */
  recheckAfterMs?: number;
}

export class JobCheckpoint implements CheckpointWriter {
  readonly jobId: string;
  private readonly kv: KV;
  private readonly turns: TurnRecords;
  private readonly o: CheckpointStoreOptions;
  /** When this delivery last saw the fence as its own. */
  private confirmedAt = 0;
  /** This delivery's name in the keys of the turns it writes. */
  private readonly token = randomBytes(6).toString('hex');
  private revision = 0;
  /** The head as last read or written; undefined before the first save of a new job, or after reading a v1 checkpoint. */
  private head: StoredCheckpointHead | undefined;
  /** What the stored turns hold: how many messages and calls, and the first and last message (to see a conversation replaced by compaction). */
  private saved = {
    messages: 0,
    calls: 0,
    first: undefined as ChatCompletionMessageParam | undefined,
    last: undefined as ChatCompletionMessageParam | undefined,
  };

  constructor(o: CheckpointStoreOptions & { jobId: string }) {
    this.kv = o.kv;
    this.o = o;
    this.jobId = o.jobId;
    this.turns = new TurnRecords({ kv: o.kv, bucket: o.bucket, jobId: o.jobId, ...(o.inlineBytes !== undefined ? { inlineBytes: o.inlineBytes } : {}) });
  }

  /**
   * The job's checkpoint, its conversation rebuilt from the turn records; a v1 checkpoint (the
   * whole conversation in one record) is read as it is, and the next save rewrites it as v2. A
   * record that fails its schema, or a turn the head names that is missing, throws StoredStateError
   * (`corrupt_state`, not retryable). `claim` (a redelivery): the head is written back unchanged,
   * so the fence moves at once and a holder that was presumed dead (paused, cut off) sees it before
   * its next LLM call instead of asking a step this delivery asks too.
   */
  async load(o: { claim?: boolean } = {}): Promise<Checkpoint | undefined> {
    const checkpoint = await this.read();
    if (checkpoint && o.claim) await this.save(checkpoint);
    return checkpoint;
  }

  async stillHeld(): Promise<void> {
    if (Date.now() - this.confirmedAt < (this.o.recheckAfterMs ?? Infinity)) return;
    const e = await this.throughOutage(() => this.kv.get(headKey(this.jobId)), 'reading the checkpoint fence');
    if ((e?.operation === 'PUT' ? e.revision : 0) !== this.revision) throw new CheckpointConflictError(this.jobId);
    this.confirmedAt = Date.now();
  }

  private throughOutage<T>(run: () => Promise<T>, what: string): Promise<T> {
    return retryThroughOutage(run, {
      budgetMs: this.o.outageBudgetMs ?? 0,
      ...(this.o.logger ? { logger: this.o.logger } : {}),
      what,
      context: { job_id: this.jobId },
    });
  }

  private async read(): Promise<Checkpoint | undefined> {
    const e = await this.kv.get(headKey(this.jobId));
    this.confirmedAt = Date.now();
    this.head = undefined;
    this.saved = { messages: 0, calls: 0, first: undefined, last: undefined };
    if (!e || e.operation !== 'PUT') {
      this.revision = 0;
      return undefined;
    }
    const version = (e.json<{ v?: unknown }>() ?? {}).v;
    if (version !== 2) {
      const checkpoint = decodeStored(StoredCheckpoint, e) as Checkpoint;
      this.revision = e.revision;
      return checkpoint;
    }
    const head = decodeStored(StoredCheckpointHead, e);
    const { messages, calls } = await this.turns.read(head);
    this.head = head;
    this.revision = e.revision;
    this.saved = { messages: messages.length, calls: calls.length, first: messages[0], last: messages.at(-1) };
    return {
      job_id: head.job_id,
      step: head.step,
      messages,
      usage: head.usage,
      calls,
      pending: head.pending,
      ...(head.session_written !== undefined ? { session_written: head.session_written } : {}),
    };
  }

  /**
   * Stores what changed since the last save: a turn record (if the conversation grew), then the
   * head under the fence. Both go out in one round trip: the turn's puts are handed to the
   * connection before the head's, and a stream stores one connection's messages in the order they
   * arrive, so a head never lands before the turn it counts unless the turn's put was refused
   * (which is then this save's error, and the head that names the missing turn reads as corrupt).
   * Through an outage the save is made again (the same head and turn keys: a repeat is safe).
   */
  save(cp: Checkpoint): Promise<void> {
    return this.throughOutage(() => this.write(cp), 'writing the checkpoint');
  }

  private async write(cp: Checkpoint): Promise<void> {
    const delta = this.delta(cp);
    const head = this.nextHead(cp, delta);
    const turn = delta ? this.turns.write(this.token, delta) : undefined;
    // Awaited below, or never when the head is refused first; either way not an unhandled rejection.
    turn?.catch(() => undefined);
    const k = headKey(cp.job_id);
    const value = JSON.stringify(head);
    try {
      this.revision = this.revision === 0 ? await this.kv.create(k, value) : await this.kv.update(k, value, this.revision);
    } catch (err) {
      if (!isCasConflict(err)) throw err;
      // Our own write may have landed with its reply lost (a reconnect): then it is ours to continue.
      const stored = await this.kv.get(k);
      if (stored?.operation !== 'PUT' || stored.string() !== value) throw new CheckpointConflictError(cp.job_id, { cause: err });
      this.revision = stored.revision;
    }
    await turn;
    this.confirmedAt = Date.now();
    this.head = head;
    this.saved = { messages: cp.messages.length, calls: cp.calls.length, first: cp.messages[0], last: cp.messages.at(-1) };
  }

  /**
   * What this save adds: the messages and calls after those stored, or the whole conversation
   * afresh when there is no v2 head yet or the stored prefix is no longer the conversation's
   * (compaction replaced it). Undefined when nothing was added (the session-written mark).
   */
  private delta(cp: Checkpoint): TurnDelta | undefined {
    const turn = (this.head?.turns ?? 0) + 1;
    const n = this.saved.messages;
    const extends_ =
      this.head !== undefined &&
      cp.messages.length >= n &&
      cp.calls.length >= this.saved.calls &&
      sameMessage(cp.messages[0], this.saved.first) &&
      sameMessage(cp.messages[n - 1], this.saved.last);
    if (!extends_) return { turn, fresh: true, messages: cp.messages, calls: cp.calls };
    if (cp.messages.length === n && cp.calls.length === this.saved.calls) return undefined;
    return { turn, fresh: false, messages: cp.messages.slice(n), calls: cp.calls.slice(this.saved.calls) };
  }

  private nextHead(cp: Checkpoint, delta: TurnDelta | undefined): StoredCheckpointHead {
    const prev = this.head;
    let writers = prev?.writers ?? [];
    let base = prev?.base ?? 1;
    if (delta?.fresh) {
      base = delta.turn;
      writers = [{ token: this.token, from: delta.turn }];
    } else if (delta && writers.at(-1)?.token !== this.token) {
      // Once per delivery that saves, not per step: the head stays small.
      writers = [...writers, { token: this.token, from: delta.turn }];
    }
    return {
      v: 2,
      job_id: cp.job_id,
      step: cp.step,
      usage: cp.usage,
      pending: cp.pending,
      ...(cp.session_written !== undefined ? { session_written: cp.session_written } : {}),
      turns: delta?.turn ?? prev?.turns ?? 0,
      base,
      writers,
    };
  }
}

/** The same message: the same object (the loop's own), or the same JSON (a copy of it). */
function sameMessage(a: ChatCompletionMessageParam | undefined, b: ChatCompletionMessageParam | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b));
}
