import type { Redis } from 'ioredis';
import type { MemoryForgetReply, Owner } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import { SessionBusyError } from '../memory-errors.js';
import type { SessionDirectory } from '../session-directory.js';
import { MemoryNotFoundError, storeCall } from './longterm-errors.js';
import type { LongTermKeys } from './longterm-keys.js';
import type { VectorStore } from './vector-store.js';

export interface ForgettingOptions {
  store: VectorStore;
  sessions: Pick<SessionDirectory, 'list' | 'delete'>;
  redis: Redis;
  keys: LongTermKeys;
  logger: Logger;
  /** Deletes the owner's task recordings (on the bus); without it recordings are left alone. */
  purgeRecordings?: (owner: Owner) => Promise<number>;
  /** How long the "forgotten at" mark outlives the forget: longer than a queued write can wait (the stream's max age). */
  markTtlMs?: number;
}

const PAGE = 200;

/**
 * Forgetting a user: every long-term memory (any status: history goes too, this is the user's
 * right to be forgotten), every session with all its keys and every recording of the user's
 * tasks. Idempotent, so a forget that
 * failed half-way (a store outage, a busy session) is finished by asking again.
 */
export class Forgetting {
  constructor(private readonly o: ForgettingOptions) {}

  async forget(userId: string, owner?: Owner): Promise<MemoryForgetReply> {
    const { redis, keys } = this.o;
    // First, so a write extracted before this moment and still queued is dropped, not stored after the purge.
    await redis.set(keys.forgottenAt(userId), new Date().toISOString(), 'PX', this.o.markTtlMs ?? 8 * 86_400_000);
    const memoriesRemoved = await storeCall('purgeUser', () => this.o.store.purgeUser(userId));
    const sessionsRemoved = await this.deleteSessions(userId);
    const recordingsRemoved = owner && this.o.purgeRecordings ? await this.o.purgeRecordings(owner) : undefined;
    await redis.srem(keys.users, userId);
    this.o.logger.info(
      { user_id: userId, memories_removed: memoriesRemoved, sessions_removed: sessionsRemoved, recordings_removed: recordingsRemoved },
      'user forgotten',
    );
    return {
      memories_removed: memoriesRemoved,
      sessions_removed: sessionsRemoved,
      ...(recordingsRemoved !== undefined ? { recordings_removed: recordingsRemoved } : {}),
    };
  }

  /**
   * Forgetting one memory of the user. The mark is set first and kept as long as the user's: a
   * write of the same memory still queued, or redelivered after a replica died before acking it,
   * is dropped instead of bringing the memory back. Not found (another user's id, never written,
   * already forgotten) removes nothing and leaves no mark.
   */
  async forgetOne(userId: string, memoryId: string): Promise<void> {
    const { redis, keys } = this.o;
    const mark = keys.forgottenMemory(userId, memoryId);
    await redis.set(mark, new Date().toISOString(), 'PX', this.o.markTtlMs ?? 8 * 86_400_000);
    if (!(await storeCall('remove', () => this.o.store.remove(userId, memoryId)))) {
      await redis.del(mark);
      throw new MemoryNotFoundError({ memoryId });
    }
    this.o.logger.info({ user_id: userId, memory_id: memoryId }, 'memory forgotten');
  }

  /**
   * Deletes the user's sessions page by page. A session an agent loop holds is not deleted under
   * it (the loop would write it back): the others go, then the caller is told `session_busy`
   * (retryable) and forgets again once the loop ends.
   */
  private async deleteSessions(userId: string): Promise<number> {
    let removed = 0;
    const busy = new Set<string>();
    for (;;) {
      const page = await this.o.sessions.list(userId, { limit: PAGE });
      const todo = page.sessions.filter((s) => !busy.has(s.session_id));
      if (todo.length === 0) break;
      for (const s of todo) {
        try {
          if ((await this.o.sessions.delete(userId, s.session_id)).deleted) removed += 1;
        } catch (err) {
          if (!(err instanceof SessionBusyError)) throw err;
          busy.add(s.session_id);
        }
      }
    }
    const [firstBusy] = busy;
    if (firstBusy !== undefined) {
      this.o.logger.warn({ user_id: userId, busy: [...busy], sessions_removed: removed }, 'forget left sessions an agent loop holds');
      throw new SessionBusyError({ sessionId: firstBusy });
    }
    return removed;
  }
}
