import { describe, expect, it } from 'vitest';
import { readPoolStatus } from '../src/index.js';
import { member, semaphoreCluster, sleep, type Member } from './semaphore-harness.js';

const { url, bucket, join } = semaphoreCluster('sem_keep');
const revision = async (m: Member, pool: string) => (await m.kv.get(`pool.${pool}`))!.revision;

describe('DistributedSemaphore with keepMs (a released permit kept for the next call)', () => {
  it('the next acquire in the same process takes the kept permit without writing the pool', async () => {
    const m = await join(bucket(), { p: { capacity: 2 } }, { keepMs: 5000 });
    await (await m.sem.acquire('p')).release();
    const before = await revision(m, 'p');
    const again = await m.sem.acquire('p');
    expect(again.waitedMs).toBe(0);
    expect(await revision(m, 'p')).toBe(before);
    // Kept or held, it counts against the cap.
    expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(1);
    await again.release();
  });

  it('a kept permit is given back when its time is up', async () => {
    const m = await join(bucket(), { p: { capacity: 1 } }, { keepMs: 150 });
    await (await m.sem.acquire('p')).release();
    expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(1);
    await sleep(600);
    expect((await readPoolStatus(m.kv))[0]!.in_use).toBe(0);
  });

  it('is given back as soon as another process waits, long before its time is up', async () => {
    const b = bucket();
    const keeper = await join(b, { p: { capacity: 1 } }, { keepMs: 60_000 });
    const other = await join(b, { p: { capacity: 1 } });
    await (await keeper.sem.acquire('p')).release();
    const p = await other.sem.acquire('p', { timeoutMs: 5000 });
    await p.release();
    // And the keeper, wanting it again, waits its turn like anyone else.
    const q = await keeper.sem.acquire('p', { timeoutMs: 5000 });
    await q.release();
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
});
