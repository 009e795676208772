import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startRedisServer } from '@hermes/testkit';
import { closeRedis, connectRedis } from '../src/redis-client.js';
import { SessionLock } from '../src/session-lock.js';
import { SessionReleaseWatch } from '../src/session-release-watch.js';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('session lock waiters', () => {
  let redis: Redis;
  let watch: SessionReleaseWatch;

  beforeAll(async () => {
    const server = await startRedisServer();
    redis = await connectRedis({ url: server.url, logger, commandTimeoutMs: 2000 });
    watch = SessionReleaseWatch.open(redis, logger);
  });

  afterAll(async () => {
    watch?.close();
    if (redis) await closeRedis(redis);
    await cleanupAll();
  });

  it('are woken by the release, long before their next poll', async () => {
    // A poll every 15 s: a waiter that got the lock within a few seconds was woken by the release.
    const locks = new SessionLock({ redis, keyPrefix: 'lock-test:', defaultLeaseMs: 30_000, retryEveryMs: 15_000, released: watch });
    const first = await locks.acquire('u1', 's-wake');
    const started = Date.now();
    const second = locks.acquire('u1', 's-wake', { waitMs: 20_000 });
    setTimeout(() => void locks.release('u1', 's-wake', first.token), 300);
    const got = await second;
    expect(got.token).not.toBe(first.token);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Two waiters for one release: one gets it, the other is woken, finds it taken, and waits on.
    const third = locks.acquire('u1', 's-wake', { waitMs: 20_000 });
    const fourth = locks.acquire('u1', 's-wake', { waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 200));
    await locks.release('u1', 's-wake', got.token);
    const winner = await Promise.race([third, fourth]);
    await locks.release('u1', 's-wake', winner.token);
    const [a, b] = await Promise.all([third, fourth]);
    expect(a.token).not.toBe(b.token);
    const other = a.token === winner.token ? b : a;
    expect(Date.now() - started).toBeLessThan(10_000);
    await locks.release('u1', 's-wake', other.token);
  });

  it('still get a lock whose holder died (its lease lapses, nobody announces it) by polling', async () => {
    const locks = new SessionLock({ redis, keyPrefix: 'lock-test:', defaultLeaseMs: 30_000, retryEveryMs: 100, released: watch });
    await locks.acquire('u1', 's-lapse', { leaseMs: 300 });
    const got = await locks.acquire('u1', 's-lapse', { waitMs: 5_000 });
    expect(got.token).toBeTruthy();
    await locks.release('u1', 's-lapse', got.token);
  });
});
