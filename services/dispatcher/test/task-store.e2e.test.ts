import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { StoredStateError, type TaskView } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { TaskStore } from '../src/task-store.js';
import { connectBus, taskView, uniquePrefix } from './support.js';

let nats: NatsServerHandle;
const buses: Bus[] = [];

/** A store on a bucket of its own, plus a second store on the same bucket over another connection. */
async function stores(): Promise<{ store: TaskStore; other: TaskStore }> {
  const prefix = uniquePrefix('store');
  const a = await connectBus(nats.url, prefix);
  const b = await connectBus(nats.url, prefix);
  buses.push(a, b);
  const store = new TaskStore(await a.kv('tasks'));
  const other = new TaskStore(await b.kv('tasks'));
  return { store, other };
}

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('TaskStore', () => {
  it('createOrGet creates the task once and returns the existing task the second time', async () => {
    const { store } = await stores();
    const first = taskView({ task_id: 't_once', goal: 'first goal' });

    const created = await store.createOrGet(first);
    const again = await store.createOrGet({ ...first, goal: 'second goal', status: 'accepted' });

    expect(created).toEqual({ view: first, created: true });
    expect(again).toEqual({ view: first, created: false });
    expect((await store.get('t_once'))?.view).toEqual(first);
  });

  it('get of a missing task is undefined', async () => {
    const { store } = await stores();
    expect(await store.get('t_missing')).toBeUndefined();
  });

  it('update applies the change, bumps the revision and returns the state as stored', async () => {
    const { store } = await stores();
    const view = taskView({ task_id: 't_update', updated_at: '2020-01-01T00:00:00.000Z' });
    await store.createOrGet(view);
    const before = await store.get('t_update');

    const returned = await store.update('t_update', (v) => ({ ...v, status: 'completed', result: { output: 'done' } }));

    const after = await store.get('t_update');
    expect(after?.view).toMatchObject({ status: 'completed', result: { output: 'done' } });
    expect(after?.revision).toBeGreaterThan(before!.revision);
    expect(after?.view.updated_at).not.toBe('2020-01-01T00:00:00.000Z');
    expect(returned).toEqual(after?.view);
  });

  it('update returning undefined writes nothing and leaves the revision unchanged', async () => {
    const { store } = await stores();
    await store.createOrGet(taskView({ task_id: 't_noop', status: 'completed' }));
    const before = await store.get('t_noop');

    const returned = await store.update('t_noop', () => undefined);

    const after = await store.get('t_noop');
    expect(after).toEqual(before);
    expect(returned).toEqual(before?.view);
  });

  it('update of a missing task returns undefined and does not create it', async () => {
    const { store } = await stores();
    const returned = await store.update('t_absent', (v) => ({ ...v, status: 'running' }));
    expect(returned).toBeUndefined();
    expect(await store.get('t_absent')).toBeUndefined();
  });

  it('concurrent updaters on two connections lose no update thanks to compare-and-set', async () => {
    const { store, other } = await stores();
    await store.createOrGet(taskView({ task_id: 't_race', attempts: 0 }));
    const start = await store.get('t_race');

    const increment = (s: TaskStore) => s.update('t_race', (v) => ({ ...v, attempts: v.attempts + 1 }));
    await Promise.all(Array.from({ length: 20 }, (_, i) => increment(i % 2 === 0 ? store : other)));

    const end = await other.get('t_race');
    expect(end?.view.attempts).toBe(20);
    // Exactly one write per increment: every conflict was retried, none was written blindly.
    expect(end!.revision - start!.revision).toBe(20);
  });
});

describe('TaskStore reading stored tasks', () => {
  // Tasks as the dispatcher of the previous release stored them (libs/contracts keeps the fixtures).
  const fixtures = new URL('../../../libs/contracts/test/fixtures/', import.meta.url);
  const historical = readdirSync(fixtures).filter((f) => f.startsWith('stored.task.'));

  async function bucket() {
    const prefix = uniquePrefix('stored');
    const bus = await connectBus(nats.url, prefix);
    buses.push(bus);
    const kv = await bus.kv('tasks');
    return { kv, store: new TaskStore(kv), bucket: bus.subjects.buckets.tasks };
  }

  it.each(historical)('reads and updates %s', async (file) => {
    const { kv, store } = await bucket();
    const view = JSON.parse(readFileSync(new URL(file, fixtures), 'utf8')) as TaskView;
    await kv.put(view.task_id, JSON.stringify(view));

    expect((await store.get(view.task_id))?.view).toEqual(view);
    expect(await store.update(view.task_id, (v) => ({ ...v, attempts: v.attempts + 1 }))).toMatchObject({ attempts: view.attempts + 1 });
  });

  it('a stored task with a version reads as the same view (v is no part of what taskGet answers)', async () => {
    const { kv, store } = await bucket();
    const view = taskView({ task_id: 't_versioned' });
    await kv.put(view.task_id, JSON.stringify({ ...view, v: 1 }));

    expect((await store.get('t_versioned'))?.view).toEqual(view);
  });

  it('an unreadable task is a StoredStateError naming the bucket, the key and the issues, on get and on update', async () => {
    const { kv, store, bucket: name } = await bucket();
    await kv.put('t_bad', JSON.stringify({ ...taskView({ task_id: 't_bad' }), status: 'finished' }));
    const changes: unknown[] = [];

    const onGet = await store.get('t_bad').then(
      () => undefined,
      (e: unknown) => e,
    );
    const onUpdate = await store
      .update('t_bad', (v) => (changes.push(v), v))
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    for (const err of [onGet, onUpdate]) {
      expect(err).toBeInstanceOf(StoredStateError);
      expect(err).toMatchObject({ code: 'corrupt_state', bucket: name, key: 't_bad', record: 'StoredTask' });
      expect((err as StoredStateError).issues.map((i) => i.path)).toContain('/status');
    }
    expect(changes).toEqual([]);
  });
});
