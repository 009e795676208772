import { describe, expect, it } from 'vitest';
import { PermitTimeoutError, readPoolStatus } from '../src/index.js';
import { GRANT_EXPECTED_MS, member, semaphoreCluster, sleep, tracked, type Member } from './semaphore-harness.js';
import { ManualClock } from './manual-clock.js';

const { url, bucket, join } = semaphoreCluster('sem_keep');
const revision = async (m: Member, pool: string) => (await m.kv.get(`pool.${pool}`))!.revision;

describe('DistributedSemaphore with keepMs (a released permit kept for the next call)', () => {
  it('a release keeps the permit without a write, and the next acquire takes it back after a read, without one either', async () => {
    const m = await join(bucket(), { p: { capacity: 2 } }, { keepMs: 5000 });
    const first = await m.sem.acquire('p');
    const held = await revision(m, 'p');
    await first.release();
    expect(await revision(m, 'p')).toBe(held);
    const again = await m.sem.acquire('p');
    expect(again.waitedMs).toBe(0);
    expect(await revision(m, 'p')).toBe(held);
    // Kept or held, it counts against the cap.
    expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(1);
    await again.release();
  });

  it('a kept permit is given back when its time is up', async () => {
    const clock = new ManualClock();
    const m = await join(bucket(), { p: { capacity: 1 } }, { keepMs: 150, clock });
    await (await m.sem.acquire('p')).release();
    expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(1);
    await clock.advance(149);
    expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(1);
    await clock.advance(1);
    expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(0);
  });

  it('is given back as soon as another process waits, long before its time is up', async () => {
    const b = bucket();
    const keeper = await join(b, { p: { capacity: 1 } }, { keepMs: 60_000 });
    const other = await join(b, { p: { capacity: 1 } });
    await (await keeper.sem.acquire('p')).release();
    const p = await other.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS });
    await p.release();
    // And the keeper, wanting it again, waits its turn like anyone else.
    const q = await keeper.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS });
    await q.release();
  });

  it('a kept permit is not taken back past a waiter whose write the keeper may not have seen yet', async () => {
    const b = bucket();
    const clock = new ManualClock();
    const keeper = await join(b, { p: { capacity: 1 } }, { keepMs: 60_000, clock });
    await (await keeper.sem.acquire('p')).release();
    // Another process starts waiting: its queue entry is written straight into the pool.
    const entry = (await keeper.kv.get('pool.p'))!;
    const state = entry.json<{ waiters: unknown[] }>();
    const now = clock.now();
    state.waiters.push({ id: 'other.1', t: now, prio: 1, est: 0, exp: now + 10_000 });
    const written = keeper.kv.update('pool.p', JSON.stringify(state), entry.revision);
    // Asked before that write's echo can reach the keeper's view: the permit still goes to the waiter first.
    const attempt = tracked(keeper.sem.acquire('p', { timeoutMs: 1000 }));
    await clock.advanceUntil(() => attempt.settled);
    await expect(attempt.promise).rejects.toBeInstanceOf(PermitTimeoutError);
    await written;
    expect(Object.keys((await keeper.kv.get('pool.p'))!.json<{ holders: Record<string, unknown> }>().holders)).toEqual(['other.1']);
  });

  it('keeps the cap across processes that all keep permits', async () => {
    const b = bucket();
    // One after another: members creating the same bucket at once race in nats-server.
    const ms: Member[] = [];
    for (let i = 0; i < 3; i++) ms.push(await join(b, { p: { capacity: 3 } }, { keepMs: 100 }));
    let inFlight = 0;
    let max = 0;
    await Promise.all(
      Array.from({ length: 45 }, async (_, i) => {
        const p = await ms[i % ms.length]!.sem.acquire('p', { timeoutMs: 20_000 });
        max = Math.max(max, ++inFlight);
        await sleep(10);
        inFlight--;
        await p.release();
      }),
    );
    expect(max).toBe(3);
  });

  it('does not keep a permit whose call the pool must learn about (a 429)', async () => {
    const b = bucket();
    const m = await join(b, { p: { capacity: 2 } }, { keepMs: 60_000 });
    await (await m.sem.acquire('p')).release({ rateLimitedForMs: 400 });
    const s = (await readPoolStatus(m.kv))[0]!;
    expect(s.in_use).toBe(0);
    expect(s.backoff_reason).not.toBeNull();
  });

  it('gives kept permits back on close', async () => {
    const b = bucket();
    const m = await member(url(), b, { p: { capacity: 1 } }, { keepMs: 60_000 });
    const watcher = await join(b, { p: { capacity: 1 } });
    await (await m.sem.acquire('p')).release();
    expect((await readPoolStatus(watcher.kv))[0]!.in_use).toBe(1);
    await m.close();
    expect((await readPoolStatus(watcher.kv))[0]!.in_use).toBe(0);
  });

  describe('reserve (a kept permit taken back ahead of its call)', () => {
    it('takes the kept permit back ahead of its call, and claiming it hands that permit over', async () => {
      const m = await join(bucket(), { p: { capacity: 2 } }, { keepMs: 5000 });
      expect(m.sem.reserve('p')).toBeUndefined(); // nothing kept yet
      await (await m.sem.acquire('p')).release();
      const kept = await revision(m, 'p');
      const r = m.sem.reserve('p')!;
      expect(r).toBeDefined();
      expect(m.sem.reserve('p')).toBeUndefined(); // the one kept permit is reserved
      const p = (await r.claim())!;
      expect(p).toMatchObject({ pool: 'p', waitedMs: 0 });
      expect(await revision(m, 'p')).toBe(kept);
      expect(await r.claim()).toBeUndefined(); // once
      expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(1);
      await p.release();
    });

    it('lapses unclaimed after keepMs, and the permit goes back like any kept one', async () => {
      const clock = new ManualClock();
      const m = await join(bucket(), { p: { capacity: 1 } }, { keepMs: 150, clock });
      await (await m.sem.acquire('p')).release();
      const r = m.sem.reserve('p')!;
      // keepMs twice: the reservation lapses (the permit is kept again), then the kept permit goes back.
      await clock.advance(300);
      expect(await r.claim()).toBeUndefined();
      expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(0);
    });

    it('is given up as soon as another process waits, and claiming it then finds nothing', async () => {
      const b = bucket();
      const keeper = await join(b, { p: { capacity: 1 } }, { keepMs: 60_000 });
      const other = await join(b, { p: { capacity: 1 } });
      await (await keeper.sem.acquire('p')).release();
      const r = keeper.sem.reserve('p')!;
      await sleep(50);
      const p = await other.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS });
      expect(await r.claim()).toBeUndefined();
      await p.release();
    });

    it('gives a reserved permit back when cancelled and on close', async () => {
      const b = bucket();
      const m = await member(url(), b, { p: { capacity: 1 } }, { keepMs: 60_000 });
      const watcher = await join(b, { p: { capacity: 1 } });
      await (await m.sem.acquire('p')).release();
      await m.sem.reserve('p')!.cancel();
      // Cancelled, it is kept again (nobody waits); reserved anew, close gives it back.
      expect((await readPoolStatus(watcher.kv))[0]!.in_use).toBe(1);
      m.sem.reserve('p');
      await m.close();
      expect((await readPoolStatus(watcher.kv))[0]!.in_use).toBe(0);
    });
  });
});
