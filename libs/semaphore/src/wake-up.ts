import { serviceOrder, type PoolState } from './pool-state.js';

/**
 * When a process must look at a pool again although nobody wrote to it: to renew its leases, to
 * drop a dead holder whose lease ran out, when a back-off ends, or when the token bucket has
 * refilled enough for the head of the queue. Undefined when only a write by others can help.
 */
export function nextWakeUp(o: { state: PoolState; now: number; leaseMs: number; agingMs: number; waiting: boolean; holding: boolean }): number | undefined {
  const s = o.state;
  const times: number[] = [];
  if (o.holding || o.waiting) times.push(o.now + o.leaseMs / 3);
  if (o.waiting) {
    for (const h of Object.values(s.holders)) times.push(h.exp + 1);
    for (const w of s.waiters) times.push(w.exp + 1);
    if (s.backoff_until > o.now) times.push(s.backoff_until);
    const head = serviceOrder(s.waiters, o.now, o.agingMs)[0];
    if (s.tpm !== null && head && s.tokens < Math.min(head.est, s.tpm)) {
      times.push(s.tokens_at + ((Math.min(head.est, s.tpm) - s.tokens) * 60_000) / s.tpm);
    }
  }
  return times.length ? Math.min(...times) : undefined;
}
