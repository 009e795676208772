import { describe, expect, it } from 'vitest';
import { PermitAbortedError, PermitTimeoutError, readPoolStatus, setPoolCapacity, type Permit } from '../src/index.js';
import { GRANT_EXPECTED_MS, semaphoreCluster, sleep, tracked, type Member } from './semaphore-harness.js';
import { ManualClock } from './manual-clock.js';

const { bucket, join } = semaphoreCluster('sem_test');

/** Runs `calls` acquire→hold→release cycles over several members, tracking concurrent holders. */
async function hammer(ms: Member[], pool: string, calls: number, holdMs: number) {
  let inFlight = 0;
  let max = 0;
  await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      const p = await ms[i % ms.length]!.sem.acquire(pool);
      inFlight++;
      max = Math.max(max, inFlight);
      await sleep(holdMs);
      inFlight--;
      await p.release();
    }),
  );
  return max;
}

describe('DistributedSemaphore', () => {
  it('never grants more than capacity across members, and uses all of it under load', async () => {
    const b = bucket();
    // One after another: members creating the same bucket at once race in nats-server.
    const ms: Member[] = [];
    for (let i = 0; i < 3; i++) ms.push(await join(b, { p: { capacity: 4 } }));
    const max = await hammer(ms, 'p', 40, 30);
    expect(max).toBe(4);
  });

  it('serves waiters in arrival order', async () => {
    const b = bucket();
    const [a, c] = [await join(b, { p: { capacity: 1 } }), await join(b, { p: { capacity: 1 } })];
    const first = await a.sem.acquire('p');
    const order: number[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) {
      const m = i % 2 ? c : a;
      waits.push(
        m.sem.acquire('p').then(async (p) => {
          order.push(i);
          await sleep(5);
          await p.release();
        }),
      );
      await sleep(15); // distinct arrival times
    }
    await first.release();
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('a waiter that times out gets PermitTimeoutError and does not block the queue', async () => {
    const b = bucket();
    const m = await join(b, { p: { capacity: 1 } });
    const held = await m.sem.acquire('p');
    await expect(m.sem.acquire('p', { timeoutMs: 150 })).rejects.toBeInstanceOf(PermitTimeoutError);
    const ac = new AbortController();
    const aborted = m.sem.acquire('p', { signal: ac.signal });
    const next = m.sem.acquire('p');
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(PermitAbortedError);
    await held.release();
    const p = await next;
    expect(p.pool).toBe('p');
    await p.release();
    const [status] = await readPoolStatus(m.kv);
    expect(status).toMatchObject({ pool: 'p', in_use: 0, waiters: 0 });
  });

  it('a permit held by a member that vanished comes back after the lease', async () => {
    const b = bucket();
    const clock = new ManualClock();
    const dying = await join(b, { p: { capacity: 1 } }, { leaseMs: 600, clock });
    const live = await join(b, { p: { capacity: 1 } }, { leaseMs: 600, clock });
    await dying.sem.acquire('p');
    // The process dies: no release, no renewals.
    await dying.nc.close();
    await (dying.sem as unknown as { close(): Promise<void> }).close();
    const p = tracked(live.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS }));
    // The clock stood still since the grant, so the lease runs out 600 ms from now.
    expect(await clock.advanceUntil(() => p.settled)).toBeGreaterThanOrEqual(600);
    await (await p.promise).release();
  });

  it('a live holder renews its lease, so a long call is never counted twice', async () => {
    const b = bucket();
    const clock = new ManualClock();
    const holder = await join(b, { p: { capacity: 1 } }, { leaseMs: 400, clock });
    const other = await join(b, { p: { capacity: 1 } }, { leaseMs: 400, clock });
    const p = await holder.sem.acquire('p');
    // Almost four leases pass while the other waits.
    const refused = tracked(other.sem.acquire('p', { timeoutMs: 1500 }));
    await clock.advanceUntil(() => refused.settled);
    await expect(refused.promise).rejects.toBeInstanceOf(PermitTimeoutError);
    await p.release();
    const q = await other.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS });
    await q.release();
  });

  it('capacity can be raised and lowered while running; lowering cancels nothing', async () => {
    const b = bucket();
    const m = await join(b, { p: { capacity: 1 } });
    const a = await m.sem.acquire('p');
    const waiting = m.sem.acquire('p');
    await sleep(100);
    await setPoolCapacity(m.kv, 'p', 3);
    const bPermit = await waiting;
    const c = await m.sem.acquire('p');
    expect((await readPoolStatus(m.kv))[0]).toMatchObject({ capacity: 3, in_use: 3 });
    await setPoolCapacity(m.kv, 'p', 1);
    // Three still held, none cancelled; a new acquire waits until only zero are left.
    const d = m.sem.acquire('p');
    let dGranted = false;
    void d.then(() => (dGranted = true));
    await a.release();
    await bPermit.release();
    await sleep(150);
    expect(dGranted).toBe(false);
    await c.release();
    await (await d).release();
  });

  it('separate pools have separate capacities', async () => {
    const b = bucket();
    const m = await join(b, { x: { capacity: 1 }, y: { capacity: 1 } });
    const x = await m.sem.acquire('x', { timeoutMs: GRANT_EXPECTED_MS });
    const y = await m.sem.acquire('y', { timeoutMs: GRANT_EXPECTED_MS });
    await expect(m.sem.acquire('x', { timeoutMs: 100 })).rejects.toBeInstanceOf(PermitTimeoutError);
    await Promise.all([x.release(), y.release()]);
  });

  it('a 429 reported by one member makes every member wait out the Retry-After', async () => {
    const b = bucket();
    const clock = new ManualClock();
    const a = await join(b, { p: { capacity: 5 } }, { clock });
    const c = await join(b, { p: { capacity: 5 } }, { clock });
    const p = await a.sem.acquire('p');
    await p.release({ rateLimitedForMs: 700 });
    const granted = tracked(c.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS }));
    expect(await clock.advanceUntil(() => granted.settled)).toBeGreaterThanOrEqual(700);
    const q = await granted.promise;
    const status = (await readPoolStatus(c.kv))[0]!;
    expect(status.in_use).toBe(1);
    await q.release();
  });

  it('repeated failures back the pool off; a success resets the count', async () => {
    const b = bucket();
    const clock = new ManualClock();
    const m = await join(b, { p: { capacity: 5 } }, { clock });
    for (let i = 0; i < 2; i++) await (await m.sem.acquire('p')).release({ failed: true });
    expect((await readPoolStatus(m.kv))[0]).toMatchObject({ consecutive_failures: 2, backoff_until: null });
    await (await m.sem.acquire('p')).release({ failed: true });
    const s = (await readPoolStatus(m.kv))[0]!;
    expect(s.backoff_reason).toBe('failing');
    // Backed off for 1 s: a caller waiting 300 ms gets nothing, a patient one gets a permit after it.
    const refused = tracked(m.sem.acquire('p', { timeoutMs: 300 }));
    await clock.advanceUntil(() => refused.settled);
    await expect(refused.promise).rejects.toBeInstanceOf(PermitTimeoutError);
    const patient = tracked(m.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS }));
    await clock.advanceUntil(() => patient.settled);
    await (await patient.promise).release({});
    expect((await readPoolStatus(m.kv))[0]).toMatchObject({ consecutive_failures: 0 });
  });

  it('a tokens-per-minute budget delays calls that would exceed it and corrects estimates with real usage', async () => {
    const b = bucket();
    // 6000 tokens/minute = 100 per second.
    const clock = new ManualClock();
    const m = await join(b, { p: { capacity: 10, tpm: 6000 } }, { clock });
    const first = await m.sem.acquire('p', { estimatedTokens: 5000 });
    await first.release({ tokens: 5950 }); // used more than estimated: 50 left
    const second = tracked(m.sem.acquire('p', { estimatedTokens: 150, timeoutMs: GRANT_EXPECTED_MS }));
    // 100 tokens more needed at 100/s.
    expect(await clock.advanceUntil(() => second.settled)).toBeGreaterThanOrEqual(1000);
    await (await second.promise).release({ tokens: 150 });
  });

  it('holders of different members release concurrently without losing updates', async () => {
    const b = bucket();
    const ms: Member[] = [];
    for (let i = 0; i < 4; i++) ms.push(await join(b, { p: { capacity: 50 } }));
    const permits: Permit[] = await Promise.all(Array.from({ length: 40 }, (_, i) => ms[i % 4]!.sem.acquire('p')));
    expect((await readPoolStatus(ms[0]!.kv))[0]!.in_use).toBe(40);
    await Promise.all(permits.map((p) => p.release()));
    expect((await readPoolStatus(ms[0]!.kv))[0]!.in_use).toBe(0);
  });
});
