import type { KV } from '@nats-io/kv';
import { expire, inUse, type PoolState } from './pool-state.js';
import { lostCompareAndSet } from './kv-conflict.js';

/** What `hermes llm status` shows for one pool. */
export interface PoolStatus {
  pool: string;
  capacity: number;
  configured_capacity: number;
  in_use: number;
  waiters: number;
  backoff_until: string | null;
  backoff_reason: string | null;
  consecutive_failures: number;
  tpm: number | null;
  /** Tokens left in the budget right now (null without a budget). */
  tokens_available: number | null;
}

/** Reads every pool's state (leases that ran out are not counted). */
export async function readPoolStatus(kv: KV, now = Date.now()): Promise<PoolStatus[]> {
  const out: PoolStatus[] = [];
  for await (const key of await kv.keys('pool.>')) {
    const e = await kv.get(key);
    if (!e || e.operation !== 'PUT') continue;
    const s = e.json<PoolState>();
    expire(s, now);
    out.push({
      pool: key.slice('pool.'.length),
      capacity: s.capacity,
      configured_capacity: s.configured_capacity,
      in_use: inUse(s),
      waiters: s.waiters.length,
      backoff_until: s.backoff_until > now ? new Date(s.backoff_until).toISOString() : null,
      backoff_reason: s.backoff_until > now ? s.backoff_reason : null,
      consecutive_failures: s.failures,
      tpm: s.tpm,
      tokens_available: s.tpm === null ? null : Math.floor(s.tokens),
    });
  }
  return out.sort((a, b) => a.pool.localeCompare(b.pool));
}

/**
 * Changes a pool's capacity while it runs. Lowering it never touches calls in flight; new grants
 * simply wait until fewer than `capacity` are held. It lasts until the configured value changes.
 */
export async function setPoolCapacity(kv: KV, pool: string, capacity: number): Promise<PoolStatus> {
  if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a whole number >= 0, got ${capacity}`);
  for (let i = 0; i < 50; i++) {
    const e = await kv.get(`pool.${pool}`);
    if (!e || e.operation !== 'PUT') throw new Error(`no pool named "${pool}" (pools appear once a call used them)`);
    const s = e.json<PoolState>();
    s.capacity = capacity;
    try {
      await kv.update(`pool.${pool}`, JSON.stringify(s), e.revision);
      return (await readPoolStatus(kv)).find((p) => p.pool === pool)!;
    } catch (err) {
      if (!lostCompareAndSet(err)) throw err;
    }
  }
  throw new Error(`pool ${pool}: too many concurrent writers`);
}
