import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KV } from '@nats-io/kv';
import { CasRetriesExhaustedError, casUpdate, isCasConflict, type Bus } from '@hermes/bus';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { connectBus, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

let nats: NatsServerHandle;
const buses: Bus[] = [];

/** The same bucket over two connections, as two replicas see it. */
async function bucket(): Promise<{ kv: KV; other: KV; bus: Bus }> {
  const prefix = uniquePrefix('cas');
  const [a, b] = await Promise.all([connectBus(nats.url, { prefix }), connectBus(nats.url, { prefix })]);
  buses.push(a, b);
  return { kv: await a.kv('tasks'), other: await b.kv('tasks'), bus: a };
}

/**
 * `kv` whose first `times` reads are each followed by a write of `{ n: 100 }` through `other`
 * before the value is handed back: a replica that wins the race between our read and our write.
 */
function racing(kv: KV, other: KV, times: number): KV {
  let raced = 0;
  return new Proxy(kv, {
    get(target, prop, receiver) {
      if (prop !== 'get') return Reflect.get(target, prop, receiver) as unknown;
      return async (key: string) => {
        const entry = await target.get(key);
        if (raced++ < times) await other.put(key, JSON.stringify({ n: 100 }));
        return entry;
      };
    },
  });
}

const errorOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('isCasConflict', () => {
  it('is true when a create finds the key there and when an update names a stale revision', async () => {
    const { kv, other } = await bucket();
    const first = await kv.create('k', '1');
    await other.update('k', '2', first);

    expect(isCasConflict(await errorOf(kv.create('k', '3')))).toBe(true);
    expect(isCasConflict(await errorOf(kv.update('k', '3', first)))).toBe(true);
    expect(isCasConflict(await errorOf(kv.update('never-written', '3', 1)))).toBe(true);
  });

  it('is false for other JetStream errors and for anything that is not one', async () => {
    const { bus, kv } = await bucket();
    const missingStream = await errorOf(natsHandles(bus).jsm.streams.info('NO_SUCH_STREAM'));
    expect(missingStream).toBeInstanceOf(Error);
    expect(isCasConflict(missingStream)).toBe(false);
    expect(isCasConflict(await errorOf(Promise.resolve().then(() => kv.update('k', '1', 0))))).toBe(false);
    expect(isCasConflict(new Error('wrong last sequence: 4'))).toBe(false);
    expect(isCasConflict(undefined)).toBe(false);
  });
});

describe('casUpdate', () => {
  const count = (n: { n: number }) => ({ n: n.n + 1 });

  it('writes the changed value at the revision it read and returns it', async () => {
    const { kv } = await bucket();
    const created = await kv.create('c', JSON.stringify({ n: 1 }));

    const outcome = await casUpdate(kv, 'c', count);

    expect(outcome).toEqual({ status: 'updated', value: { n: 2 }, revision: created + 1 });
    expect((await kv.get('c'))?.json()).toEqual({ n: 2 });
  });

  it('after losing to another writer, reads again and applies the change to what that writer stored', async () => {
    const { kv, other } = await bucket();
    await kv.create('c', JSON.stringify({ n: 1 }));
    const seen: number[] = [];

    const outcome = await casUpdate<{ n: number }>(racing(kv, other, 1), 'c', (v) => {
      seen.push(v.n);
      return { n: v.n + 1 };
    });

    expect(seen).toEqual([1, 100]);
    expect(outcome).toMatchObject({ status: 'updated', value: { n: 101 } });
    expect((await kv.get('c'))?.json()).toEqual({ n: 101 });
  });

  it('two replicas incrementing the same key concurrently lose no increment', async () => {
    const { kv, other } = await bucket();
    await kv.create('c', JSON.stringify({ n: 0 }));

    await Promise.all(
      [kv, other].map(async (store) => {
        for (let i = 0; i < 15; i++) await casUpdate(store, 'c', count, { maxAttempts: 100 });
      }),
    );

    expect((await kv.get('c'))?.json()).toEqual({ n: 30 });
  });

  it('a change that returns undefined writes nothing', async () => {
    const { kv } = await bucket();
    const revision = await kv.create('c', JSON.stringify({ n: 1 }));

    expect(await casUpdate(kv, 'c', () => undefined)).toEqual({ status: 'unchanged', value: { n: 1 }, revision });
    expect((await kv.get('c'))?.revision).toBe(revision);
  });

  it('does not create a key that is absent or deleted', async () => {
    const { kv } = await bucket();
    await kv.create('gone', JSON.stringify({ n: 1 }));
    await kv.delete('gone');

    expect(await casUpdate(kv, 'absent', count)).toEqual({ status: 'missing' });
    expect(await casUpdate(kv, 'gone', count)).toEqual({ status: 'missing' });
    expect(await kv.get('absent')).toBeNull();
  });

  it('gives up after maxAttempts lost races with CasRetriesExhaustedError naming the key', async () => {
    const { kv, other } = await bucket();
    await kv.create('hot', JSON.stringify({ n: 0 }));
    let calls = 0;

    const err = await errorOf(
      casUpdate<{ n: number }>(
        racing(kv, other, Infinity),
        'hot',
        (v) => {
          calls++;
          return count(v);
        },
        { maxAttempts: 3 },
      ),
    );

    expect(calls).toBe(3);
    expect(err).toBeInstanceOf(CasRetriesExhaustedError);
    expect(err).toMatchObject({ code: 'cas_retries_exhausted', key: 'hot', attempts: 3 });
    expect(isCasConflict((err as Error).cause)).toBe(true);
  });

  it('lets what decode throws through (a record that fails its schema is not retried)', async () => {
    const { kv } = await bucket();
    await kv.create('bad', 'not json');
    const boom = new Error('undecodable');

    await expect(
      casUpdate(kv, 'bad', count, {
        decode: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
  });
});
