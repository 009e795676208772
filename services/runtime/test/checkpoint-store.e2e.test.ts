import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { StoredStateError } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { CheckpointConflictError, CheckpointStore, type Checkpoint } from '../src/checkpoint-store.js';
import { connectBus, uniquePrefix } from './support.js';

let nats: NatsServerHandle;
const buses: Bus[] = [];

/** Two runtimes' stores on one checkpoint bucket of its own. */
async function stores() {
  const prefix = uniquePrefix('cp');
  const [a, b] = await Promise.all([connectBus(nats.url, prefix), connectBus(nats.url, prefix)]);
  buses.push(a, b);
  const kv = await a.kv('checkpoints');
  return { kv, store: new CheckpointStore(kv), other: new CheckpointStore(await b.kv('checkpoints')), bucket: a.subjects.buckets.checkpoints };
}

/** A checkpoint as a runtime of the previous release wrote it (libs/contracts keeps the fixtures). */
const historical = (): Checkpoint =>
  JSON.parse(
    readFileSync(new URL('../../../libs/contracts/test/fixtures/stored.checkpoint.v1.resumed-with-tool-results.json', import.meta.url), 'utf8'),
  ) as Checkpoint;

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('CheckpointStore', () => {
  it('resumes a checkpoint an earlier release wrote, and saves the next one over it', async () => {
    const { kv, store } = await stores();
    const cp = historical();
    await kv.put(`job.${cp.job_id}`, JSON.stringify(cp));

    const delivery = store.open(cp.job_id);
    const loaded = await delivery.load();
    expect(loaded).toEqual(cp);
    await delivery.save({ ...loaded!, step: loaded!.step + 1 });

    expect((await store.open(cp.job_id).load())?.step).toBe(cp.step + 1);
  });

  it('an unreadable checkpoint is a StoredStateError naming the bucket and key, not a checkpoint', async () => {
    const { kv, store, bucket } = await stores();
    await kv.put('job.j_bad', JSON.stringify({ v: 1, job_id: 'j_bad', step: 2, messages: 'lost' }));

    const err = await store
      .open('j_bad')
      .load()
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    expect(err).toBeInstanceOf(StoredStateError);
    expect(err).toMatchObject({ code: 'corrupt_state', retryable: false, bucket, key: 'job.j_bad' });
    expect((err as StoredStateError).issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/messages', '/usage', '/calls', '/pending']));
  });

  it('a runtime that saves after another took the job over gets CheckpointConflictError', async () => {
    const { store, other } = await stores();
    const cp = { ...historical(), job_id: 'j_taken' };
    const first = store.open('j_taken');
    expect(await first.load()).toBeUndefined();
    await first.save(cp);
    const takeover = other.open('j_taken');
    expect(await takeover.load()).toEqual(cp);
    await takeover.save({ ...cp, step: cp.step + 1 });

    await expect(first.save({ ...cp, step: cp.step + 2 })).rejects.toBeInstanceOf(CheckpointConflictError);
  });

  it('a redelivery claims the fence on load: the earlier holder learns it before its next LLM call, not at its next write', async () => {
    const { kv } = await stores();
    // recheckAfterMs 0: as if the holder had been paused past half its ack wait.
    const paused = new CheckpointStore(kv, { budgetMs: 0, recheckAfterMs: 0 });
    const cp = { ...historical(), job_id: 'j_claimed' };
    const first = paused.open('j_claimed');
    await first.load();
    await first.save(cp);
    await first.stillHeld();

    const next = new CheckpointStore(kv).open('j_claimed');
    expect(await next.load({ claim: true })).toEqual(cp);
    await expect(first.stillHeld()).rejects.toBeInstanceOf(CheckpointConflictError);
    // The claim changed nothing but the revision: the new holder goes on from the same state.
    await next.save({ ...cp, step: cp.step + 1 });
  });

  it('a save during a nats-server restart waits it out and lands once, instead of losing the answer it holds', async () => {
    const own = await startNatsServer();
    const bus = await connectBus(own.url, uniquePrefix('cpo'));
    buses.push(bus);
    const kv = await bus.kv('checkpoints');
    const store = new CheckpointStore(kv, { budgetMs: 60_000 });
    const cp = { ...historical(), job_id: 'j_outage' };
    const h = store.open('j_outage');
    await h.load();
    await h.save(cp);
    await own.kill();
    const saving = h.save({ ...cp, step: cp.step + 1 });
    await new Promise((r) => setTimeout(r, 2000));
    await own.restart();
    await saving;
    const stored = await kv.get('job.j_outage');
    expect(JSON.parse(stored!.string()).step).toBe(cp.step + 1);
    // Written once: a fresh bucket, so revision 1 was the create and 2 this save.
    expect(stored!.revision).toBe(2);
  });
});
