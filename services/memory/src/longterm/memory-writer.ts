import type { Redis } from 'ioredis';
import type { MemoryWriteJob } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import { storeCall } from './longterm-errors.js';
import type { LongTermKeys } from './longterm-keys.js';
import type { Embedder } from './embedder.js';
import { scopeOf } from '../owner-scope.js';
import type { MemoryRecord, VectorStore } from './vector-store.js';

export interface MemoryWriterOptions {
  store: VectorStore;
  embedder: Pick<Embedder, 'embed'>;
  redis: Redis;
  keys: LongTermKeys;
  logger: Logger;
}

export type WriteOutcome = 'written' | 'already_written' | 'dropped_forgotten';

/**
 * Stores one extracted memory: embeds it, upserts it, and marks what it supersedes. Runs from the
 * memory-writes work queue; any failure throws, so the job is nak-ed and retried with back-off
 * (a vector-store outage delays writes, it never loses them). Every step is idempotent: a job
 * redelivered after a crash half-way finishes the same way.
 */
export class MemoryWriter {
  constructor(private readonly o: MemoryWriterOptions) {}

  async write(job: MemoryWriteJob): Promise<WriteOutcome> {
    const { store } = this.o;
    // The stores know users by owner key: a user id means something only inside its team.
    const user = scopeOf(job).user;
    // A user forgotten after this memory was extracted stays forgotten, and so does a memory
    // forgotten on its own (this delivery may be a redelivery of the write that stored it).
    if ((await this.userForgottenSince(job)) || (await this.memoryForgotten(job))) return 'dropped_forgotten';
    const existing = await storeCall('get', () => store.get(user, job.memory_id));
    let outcome: WriteOutcome = 'already_written';
    if (!existing) {
      const [vector] = await storeCall('embed', () => this.o.embedder.embed([job.content]));
      const record: MemoryRecord = {
        memory_id: job.memory_id,
        user_id: user,
        type: job.type,
        content: job.content,
        confidence: job.confidence,
        status: 'active',
        created_at: job.created_at,
        updated_at: new Date().toISOString(),
        ...(job.source ? { source: job.source } : {}),
        ...(job.provenance ? { provenance: job.provenance } : {}),
      };
      // Registered before the write, so an archival sweep can never miss a user that has memories.
      await this.o.redis.sadd(this.o.keys.users, user);
      await storeCall('upsert', () => store.upsert(record, vector!));
      // A forget that ran while this write was in flight (between the check above and the upsert)
      // removed before the record existed: remove again, so it cannot outlive the forget.
      if (await this.userForgottenSince(job)) {
        await storeCall('purgeUser', () => store.purgeUser(user));
        return 'dropped_forgotten';
      }
      if (await this.memoryForgotten(job)) {
        await storeCall('remove', () => store.remove(user, job.memory_id));
        return 'dropped_forgotten';
      }
      outcome = 'written';
    }
    if (job.supersedes) await this.supersede(user, job.supersedes, job.memory_id);
    return outcome;
  }

  private async userForgottenSince(job: MemoryWriteJob): Promise<boolean> {
    const forgottenAt = await this.o.redis.get(this.o.keys.forgottenAt(scopeOf(job).user));
    return forgottenAt !== null && job.created_at <= forgottenAt;
  }

  private async memoryForgotten(job: MemoryWriteJob): Promise<boolean> {
    return (await this.o.redis.exists(this.o.keys.forgottenMemory(scopeOf(job).user, job.memory_id))) === 1;
  }

  /** Marks the old memory superseded by the new one; history is kept (the old record stays, out of recall). */
  private async supersede(userId: string, oldId: string, newId: string): Promise<void> {
    // Scoped by user like every store call: an id of another user's memory is simply not found.
    const old = await storeCall('get', () => this.o.store.get(userId, oldId));
    if (!old || old.status === 'superseded' || old.status === 'deleted') return;
    await storeCall('update', () => this.o.store.update(userId, oldId, { status: 'superseded', superseded_by: newId, updated_at: new Date().toISOString() }));
    this.o.logger.info({ user_id: userId, memory_id: oldId, superseded_by: newId }, 'memory superseded');
  }
}
