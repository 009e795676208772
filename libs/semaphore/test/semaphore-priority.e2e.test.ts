import { describe, expect, it } from 'vitest';
import type { ServicePolicy } from '../src/index.js';
import { semaphoreCluster, sleep, type Member } from './semaphore-harness.js';

const { bucket, join } = semaphoreCluster('sem_prio');

/** Two members on a fresh bucket, both with the same policy (as every process of a cluster is). */
async function pair(capacity: number, policy: Partial<ServicePolicy>): Promise<[Member, Member]> {
  const b = bucket();
  return [await join(b, { p: { capacity } }, { policy }), await join(b, { p: { capacity } }, { policy })];
}

/**
 * Queues one waiter per priority (alternating members, distinct arrival times) behind a held
 * permit, releases it and returns the order in which the waiters were granted.
 */
async function grantOrder(ms: [Member, Member], priorities: number[], pauseBeforeLastMs = 0): Promise<number[]> {
  const first = await ms[0].sem.acquire('p');
  const order: number[] = [];
  const waits: Promise<void>[] = [];
  for (const [i, priority] of priorities.entries()) {
    if (i === priorities.length - 1) await sleep(pauseBeforeLastMs);
    waits.push(
      ms[i % 2]!.sem.acquire('p', { priority }).then(async (permit) => {
        order.push(i);
        await permit.release();
      }),
    );
    await sleep(15); // distinct arrival times
  }
  await first.release();
  await Promise.all(waits);
  return order;
}

/**
 * Keeps `workers` loops of acquire → hold → release going until `stop()` says so, counting grants
 * and the highest number held at once.
 */
function load(m: Member, o: { workers: number; holdMs: number; priority: number; background?: boolean }) {
  let running = true;
  let held = 0;
  const stats = { grants: 0, maxHeld: 0 };
  const loops = Array.from({ length: o.workers }, async () => {
    while (running) {
      const permit = await m.sem.acquire('p', { priority: o.priority, ...(o.background ? { background: true } : {}) });
      stats.grants++;
      stats.maxHeld = Math.max(stats.maxHeld, ++held);
      await sleep(o.holdMs);
      held--;
      await permit.release();
    }
  });
  return {
    stats,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Interactive work saturating a pool of 4 (8 loops) on one member, 3 background loops on another, for 40 interactive grants. */
async function saturated(policy: Partial<ServicePolicy>) {
  const [a, b] = await pair(4, policy);
  const interactive = load(a, { workers: 8, holdMs: 20, priority: 2 });
  await sleep(100); // the pool is saturated before background work starts waiting
  const background = load(b, { workers: 3, holdMs: 20, priority: 0, background: true });
  while (interactive.stats.grants < 40) await sleep(10);
  const bgDuringSaturation = background.stats.grants;
  await interactive.stop();
  await background.stop();
  return { bgDuringSaturation, bgMaxHeld: background.stats.maxHeld };
}

describe('DistributedSemaphore priorities and background share', () => {
  it('grants waiters by priority across members, arrival order within a level', async () => {
    const order = await grantOrder(await pair(1, { agingMs: 60_000 }), [0, 1, 2, 1, 2, 0]);
    expect(order).toEqual([2, 4, 1, 3, 0, 5]);
  });

  it('aging lifts a long waiter over newer higher-priority ones, so nothing starves', async () => {
    // The batch waiter waits at least 300 ms, three aging steps of 100 ms: it ranks above a fresh priority 2.
    const aged = await grantOrder(await pair(1, { agingMs: 100 }), [0, 2], 300);
    expect(aged).toEqual([0, 1]);
    // The same queue with aging off: priority alone decides.
    const unaged = await grantOrder(await pair(1, { agingMs: 0 }), [0, 2], 300);
    expect(unaged).toEqual([1, 0]);
  });

  it('background work gets its minimum share under interactive saturation, and never more than its maximum', async () => {
    // No aging within the test, so only the minimum share can let background work in.
    const withShare = await saturated({ agingMs: 600_000, backgroundMinShare: 0.25, backgroundMaxShare: 0.5 });
    expect(withShare.bgDuringSaturation).toBeGreaterThan(0);
    expect(withShare.bgMaxHeld).toBeLessThanOrEqual(2);
    // The same load without a minimum share: interactive work holds background work off entirely.
    const withoutShare = await saturated({ agingMs: 600_000, backgroundMinShare: 0, backgroundMaxShare: 0.5 });
    expect(withoutShare.bgDuringSaturation).toBe(0);
  });

  it('background work alone takes no more than its maximum share', async () => {
    const [a] = await pair(4, { backgroundMinShare: 0.1, backgroundMaxShare: 0.5 });
    const background = load(a, { workers: 6, holdMs: 20, priority: 0, background: true });
    while (background.stats.grants < 30) await sleep(10);
    await background.stop();
    expect(background.stats.maxHeld).toBe(2);
  });
});
