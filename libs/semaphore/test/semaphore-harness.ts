import { afterAll, afterEach, beforeAll } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { DistributedSemaphore, type PoolSettings, type SemaphoreOptions } from '../src/index.js';

/** One "process": its own NATS connection and semaphore client on a shared bucket. */
export interface Member {
  nc: NatsConnection;
  kv: KV;
  sem: DistributedSemaphore;
  close(): Promise<void>;
}

export async function member(
  url: string,
  bucket: string,
  settings: Record<string, PoolSettings> | ((pool: string) => PoolSettings),
  opts: Partial<SemaphoreOptions> = {},
): Promise<Member> {
  const nc = await connect({ servers: url });
  const kv = await new Kvm(jetstream(nc)).create(bucket, { history: 1 });
  const poolSettings = typeof settings === 'function' ? settings : (p: string) => settings[p] ?? { capacity: 1 };
  const sem = await DistributedSemaphore.open({ kv, poolSettings, ...opts });
  return {
    nc,
    kv,
    sem,
    close: async () => {
      await sem.close();
      await nc.close();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One nats-server for a test file and members that are closed after each test: `join` a bucket
 * (`bucket()` gives a fresh one) with `member`'s arguments after the URL.
 */
export function semaphoreCluster(bucketPrefix: string) {
  let nats: NatsServerHandle | undefined;
  const members: Member[] = [];
  let n = 0;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterEach(async () => {
    await Promise.all(members.splice(0).map((m) => m.close().catch(() => {})));
  });
  afterAll(async () => {
    await nats?.stop();
  });
  return {
    url: () => nats!.url,
    bucket: () => `${bucketPrefix}_${++n}`,
    join: async (...args: Parameters<typeof member> extends [string, ...infer Rest] ? Rest : never) => {
      const m = await member(nats!.url, ...args);
      members.push(m);
      return m;
    },
  };
}

/**
 * Timeout for an acquire the test expects to succeed. Generous on purpose: on a loaded CI machine a
 * grant can lag by seconds, and these tests assert that it comes, not how fast.
 */
export const GRANT_EXPECTED_MS = 15_000;

/** A promise and whether it has settled yet, for a test that moves a clock until it does. */
export function tracked<T>(promise: Promise<T>): { promise: Promise<T>; readonly settled: boolean } {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    promise,
    get settled() {
      return settled;
    },
  };
}
