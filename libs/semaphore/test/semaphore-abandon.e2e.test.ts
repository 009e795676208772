import { describe, expect, it } from 'vitest';
import { PermitAbortedError, PermitTimeoutError, readPoolStatus } from '../src/index.js';
import { GRANT_EXPECTED_MS, semaphoreCluster, sleep, type Member } from './semaphore-harness.js';

const cluster = semaphoreCluster('sem_abandon');
const join = (bucket: string) => cluster.join(bucket, { p: { capacity: 1 } });

/** A member whose view of pool `p` is loaded, so its next acquire writes at once. */
async function warmed(bucket: string): Promise<Member> {
  const m = await join(bucket);
  await (await m.sem.acquire('p')).release();
  return m;
}

describe('a waiter abandoned while its place in the queue is being written', () => {
  it('by its signal, is taken out of the shared queue and blocks nobody', async () => {
    const bucket = cluster.bucket();
    const holder = await warmed(bucket);
    const quitter = await warmed(bucket);
    const patient = await warmed(bucket);
    const held = await holder.sem.acquire('p');

    const ac = new AbortController();
    const abandoned = quitter.sem.acquire('p', { signal: ac.signal });
    // The acquire has just sent the write that puts it in the shared queue; give up before the reply.
    ac.abort();
    await expect(abandoned).rejects.toBeInstanceOf(PermitAbortedError);
    await sleep(200);
    expect((await readPoolStatus(holder.kv))[0]).toMatchObject({ in_use: 1, waiters: 0 });

    const next = patient.sem.acquire('p', { timeoutMs: GRANT_EXPECTED_MS });
    await held.release();
    await (await next).release();
  });

  it('by its timeout, is taken out of the shared queue too', async () => {
    const bucket = cluster.bucket();
    const holder = await warmed(bucket);
    const quitter = await warmed(bucket);
    const held = await holder.sem.acquire('p');

    // Several attempts, since the timer has to fire while the write is on its way.
    for (let i = 0; i < 10; i++) {
      await expect(quitter.sem.acquire('p', { timeoutMs: 1 })).rejects.toBeInstanceOf(PermitTimeoutError);
    }
    await sleep(200);
    expect((await readPoolStatus(holder.kv))[0]).toMatchObject({ in_use: 1, waiters: 0 });
    await held.release();
  });
});
