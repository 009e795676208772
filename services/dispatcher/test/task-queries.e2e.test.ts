import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplyError, RemoteError, request, serve, type Bus } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, type Owner } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { TaskStore } from '../src/task-store.js';
import { getTask } from '../src/task-queries.js';
import { connectBus, taskView, uniquePrefix, rejectionOf } from './support.js';

let nats: NatsServerHandle;
const buses: Bus[] = [];

async function queriesFixture() {
  const bus = await connectBus(nats.url, uniquePrefix('queries'));
  buses.push(bus);
  const store = new TaskStore(await bus.kv('tasks'));
  return { bus, store };
}

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

/** The roles the dispatcher grants, by owner: what taskGet adds to the view for the toolbus. */
const rolesOf = (owner: Owner): string[] => (owner.team === DEFAULT_TEAM && owner.user_id === 'u_alice' ? ['finance'] : ['user']);

describe('getTask', () => {
  it("returns the task's view, for its owner and when no user is given", async () => {
    const { store } = await queriesFixture();
    const view = taskView({ task_id: 't_q1', user_id: 'u_alice', status: 'completed', result: { output: 'done' } });
    await store.createOrGet(view);

    expect(await getTask(store, { task_id: 't_q1', user_id: 'u_alice' }, { rolesOf })).toEqual({ ...view, roles: ['finance'] });
    expect(await getTask(store, { task_id: 't_q1' }, { rolesOf })).toEqual({ ...view, roles: ['finance'] });
    expect(await getTask(store, { task_id: 't_q1', user_id: null }, { rolesOf })).toEqual({ ...view, roles: ['finance'] });
  });

  it('a missing task is a not_found ReplyError', async () => {
    const { store } = await queriesFixture();

    const err = await rejectionOf(getTask(store, { task_id: 't_nope' }, { rolesOf }), ReplyError);

    expect(err.wire).toMatchObject({ code: 'not_found', retryable: false, details: { task_id: 't_nope' } });
  });

  it("another user's task is reported exactly like a missing one", async () => {
    const { store } = await queriesFixture();
    await store.createOrGet(taskView({ task_id: 't_q2', user_id: 'u_alice' }));

    const foreign = await rejectionOf(getTask(store, { task_id: 't_q2', user_id: 'u_mallory' }, { rolesOf }), ReplyError);
    const missing = await rejectionOf(getTask(store, { task_id: 't_q2x', user_id: 'u_mallory' }, { rolesOf }), ReplyError);

    expect(foreign.wire.code).toBe('not_found');
    expect(foreign.wire.message.replace('t_q2', 'ID')).toBe(missing.wire.message.replace('t_q2x', 'ID'));
  });

  it('over the bus, taskGet answers the view and a RemoteError not_found for another user', async () => {
    const { bus, store } = await queriesFixture();
    const view = taskView({ task_id: 't_q3', user_id: 'u_alice' });
    await store.createOrGet(view);
    const sub = serve(bus, contracts.taskGet, (req) => getTask(store, req, { rolesOf }));

    try {
      expect(await request(bus, contracts.taskGet, { task_id: 't_q3', user_id: 'u_alice' })).toEqual({ ...view, roles: ['finance'] });
      const err = await request(bus, contracts.taskGet, { task_id: 't_q3', user_id: 'u_bob' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RemoteError);
      expect((err as RemoteError).code).toBe('not_found');
      expect((err as RemoteError).retryable).toBe(false);
    } finally {
      sub.unsubscribe();
    }
  });
});
