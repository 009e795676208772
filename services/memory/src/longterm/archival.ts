import type { Redis } from 'ioredis';
import type { Logger } from '@hermes/telemetry';
import { MemoryNotFoundError, storeCall } from './longterm-errors.js';
import type { LongTermKeys } from './longterm-keys.js';
import type { Embedder } from './embedder.js';
import type { MemoryRecord, VectorStore } from './vector-store.js';

export interface ArchivalOptions {
  store: VectorStore;
  embedder: Pick<Embedder, 'embed'>;
  redis: Redis;
  keys: LongTermKeys;
  logger: Logger;
  /** Active memories neither recalled nor written for this long are archived (MEMORY_ARCHIVE_AFTER_MS). */
  archiveAfterMs: number;
  /** How often each replica tries a sweep (MEMORY_ARCHIVE_SWEEP_MS); one replica sweeps per period. */
  sweepEveryMs: number;
}

/**
 * Cold storage: memories nobody recalled for `archiveAfterMs` become `archived`, which takes
 * them out of the index (recall cannot return them) while the record stays, so a restore
 * brings them back as they were. A periodic sweep, one replica at a time (a Redis lease).
 */
export class Archival {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly o: ArchivalOptions) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweepIfFree().finally(() => (this.running = undefined));
    }, this.o.sweepEveryMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One sweep over every user with memories; returns how many memories were archived. */
  async sweep(now = Date.now()): Promise<number> {
    const cutoff = now - this.o.archiveAfterMs;
    let archived = 0;
    let cursor = '0';
    do {
      const [next, users] = await this.o.redis.sscan(this.o.keys.users, cursor, 'COUNT', 200);
      cursor = next;
      for (const userId of users) {
        try {
          archived += await this.sweepUser(userId, cutoff, now);
        } catch (err) {
          // One user's failure (e.g. a store hiccup) must not stop the others; the next sweep retries.
          this.o.logger.warn({ err: (err as Error).message, user_id: userId }, 'archival sweep failed for a user');
        }
      }
    } while (cursor !== '0');
    if (archived > 0) this.o.logger.info({ archived }, 'cold memories archived');
    return archived;
  }

  /** Brings archived memories back into the index: one by id, or all of the user's. */
  async restore(userId: string, memoryId?: string): Promise<MemoryRecord[]> {
    let records: MemoryRecord[];
    if (memoryId) {
      const record = await storeCall('get', () => this.o.store.get(userId, memoryId));
      if (!record || record.status !== 'archived') throw new MemoryNotFoundError({ memoryId, status: 'archived' });
      records = [record];
    } else {
      records = await storeCall('list', () => this.o.store.list(userId, { status: 'archived' }));
    }
    if (records.length === 0) return [];
    // Re-embedded rather than relying on the store keeping archived vectors: either store, and a
    // changed embedder, restore the same way. Stamped as recalled, so the next sweep leaves it.
    const vectors = await storeCall('embed', () => this.o.embedder.embed(records.map((r) => r.content)));
    const at = new Date().toISOString();
    const restored = records.map((r): MemoryRecord => ({ ...r, status: 'active', last_recalled_at: at, updated_at: at }));
    await storeCall('upsert', () => this.o.store.upsertMany(restored.map((record, i) => ({ record, vector: vectors[i]! }))));
    this.o.logger.info({ user_id: userId, restored: restored.length }, 'archived memories restored');
    return restored;
  }

  private async sweepUser(userId: string, cutoff: number, now: number): Promise<number> {
    const active = await storeCall('list', () => this.o.store.list(userId, { status: 'active' }));
    const cold = active.filter((r) => Date.parse(r.last_recalled_at ?? r.created_at) < cutoff);
    const at = new Date(now).toISOString();
    for (const r of cold) await storeCall('update', () => this.o.store.update(userId, r.memory_id, { status: 'archived', updated_at: at }));
    return cold.length;
  }

  private async sweepIfFree(): Promise<number> {
    try {
      // Never released, it just lapses: whichever replica's timer fires first in a period sweeps,
      // and the others find the key and skip until the next period.
      if ((await this.o.redis.set(this.o.keys.sweepLock, String(process.pid), 'PX', Math.max(1, this.o.sweepEveryMs - 50), 'NX')) === null) return 0;
      return await this.sweep();
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'archival sweep failed');
      return 0;
    }
  }
}
