import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteError, request, startWorkConsumer, type Bus, type WorkConsumer } from '@hermes/bus';
import { natsHandles } from '@hermes/bus/internal';
import { DEFAULT_TEAM, contracts, makeTaskEvent, taskEventData, taskIdFor, type RuntimeJob, type TaskSubmitEvent } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { assembleDispatcher, dispatcherConfig, serveTaskQueries } from '../src/dispatcher-service.js';
import { connectBus, eventually, silentLogger, storedJobs, submission, taskEvents, uniquePrefix, rejectionOf } from './support.js';

let nats: NatsServerHandle;
const buses: Bus[] = [];
const consumers: WorkConsumer[] = [];
const subscriptions: { unsubscribe(): void }[] = [];

/** A dispatcher (intake and the task queries, bare and per team, as the service serves them) on streams of its own. */
async function teamsFixture() {
  const bus = await connectBus(nats.url, uniquePrefix('teams'));
  buses.push(bus);
  await bus.ensureStreams(['taskSubmit', 'taskEvents', 'runtimeJobs', 'runtimeJobsAhead', 'deadLetters']);
  await bus.ensureConsumers(['dispatcherIntake']);
  const { store, index, coordinator, intake, rolesOf } = await assembleDispatcher({
    bus,
    config: dispatcherConfig({
      PLAN_MODE: 'single',
      HERMES_USER_ROLES: JSON.stringify({ default: ['user'], users: { alice: ['admin'], 'team-b/alice': ['finance'] } }),
    }),
    logger: silentLogger,
  });
  consumers.push(
    await startWorkConsumer(bus, { stream: bus.subjects.streams.taskSubmit, durable: bus.subjects.consumers.dispatcherIntake }, (msg) => intake.handle(msg)),
  );
  const s = bus.subjects;
  subscriptions.push(...serveTaskQueries(bus, { store, index, coordinator, rolesOf }));
  const submit = (team: string, event: TaskSubmitEvent) => bus.publish(contracts.taskSubmit, event, { subject: s.taskSubmit(team) });
  const accepted = (team: string, taskId: string) =>
    eventually(async () => (await taskEvents(bus, taskId, team)).map((e) => taskEventData(e, 'accepted')).find(Boolean), 10_000, `accepted ${taskId}`);
  const jobs = async () => (await storedJobs(bus)).map((m) => m.value as RuntimeJob);
  return { bus, store, submit, accepted, jobs };
}

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  for (const sub of subscriptions) sub.unsubscribe();
  await Promise.all(consumers.map((c) => c.stop(1_000)));
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('tasks of teams', () => {
  it('takes the team from the submit subject: the same source, id and user in two teams are two tasks of two owners, each with its own roles', async () => {
    const f = await teamsFixture();
    const { event } = submission({ user_id: 'alice', goal: 'pay the invoice' }, { source: '/shared/source', id: 'same-id' });
    await f.submit('team-a', event);
    await f.submit('team-b', event);
    const idA = taskIdFor('team-a', event.source, event.id);
    const idB = taskIdFor('team-b', event.source, event.id);
    expect(idA).not.toBe(idB);

    const [a, b] = await Promise.all([f.accepted('team-a', idA), f.accepted('team-b', idB)]);
    expect(a).toMatchObject({ task_id: idA, user_id: 'alice', team: 'team-a' });
    expect(b).toMatchObject({ task_id: idB, user_id: 'alice', team: 'team-b' });
    expect((await f.store.get(idA))?.view).toMatchObject({ team: 'team-a', user_id: 'alice' });
    // Nothing of either task went out on the default team's subjects.
    expect(await taskEvents(f.bus, idA)).toEqual([]);

    const jobs = await eventually(
      async () => {
        const all = await f.jobs();
        return all.length >= 2 ? all : undefined;
      },
      10_000,
      'two jobs',
    );
    // The roles of user "alice" of the default team (admin) go to neither: a user id means something only in its team.
    expect(jobs.find((j) => j.task_id === idA)).toMatchObject({ team: 'team-a', user_id: 'alice', roles: ['user'] });
    expect(jobs.find((j) => j.task_id === idB)).toMatchObject({ team: 'team-b', user_id: 'alice', roles: ['finance'] });
  });

  it('refuses a submission whose request claims a team: the team is never read from the payload', async () => {
    const f = await teamsFixture();
    const { event } = submission({ user_id: 'mallory' }, { id: 'claims-a-team' });
    const claiming = { ...event, data: { ...event.data, team: 'team-b' } } as unknown as TaskSubmitEvent;
    await natsHandles(f.bus).js.publish(f.bus.subjects.taskSubmit('team-a'), new TextEncoder().encode(JSON.stringify(claiming)));
    const taskId = taskIdFor('team-a', event.source, event.id);

    const rejected = await eventually(
      async () => (await taskEvents(f.bus, taskId, 'team-a')).map((e) => taskEventData(e, 'rejected')).find(Boolean),
      10_000,
      'rejected',
    );
    expect(rejected?.error.code).toBe('invalid_task_event');
    expect(rejected?.issues.map((i) => i.path)).toContain('/data/team');
    expect(await f.store.get(taskId)).toBeUndefined();
    expect(await f.store.get(taskIdFor('team-b', event.source, event.id))).toBeUndefined();
  });

  it("answers a team's get, list and cancel only from that team's tasks; another team's task is not found, like a missing one", async () => {
    const f = await teamsFixture();
    const { event } = submission({ user_id: 'bob', goal: 'team b work' }, { id: 'b-task' });
    await f.submit('team-b', event);
    const taskId = taskIdFor('team-b', event.source, event.id);
    await f.accepted('team-b', taskId);
    const s = f.bus.subjects;

    expect((await request(f.bus, contracts.teamTaskGet, { task_id: taskId }, { subject: s.teamTaskGet('team-b') })).team).toBe('team-b');
    for (const team of ['team-a', DEFAULT_TEAM]) {
      const foreign = await rejectionOf(request(f.bus, contracts.teamTaskGet, { task_id: taskId }, { subject: s.teamTaskGet(team) }), RemoteError);
      const missing = await rejectionOf(request(f.bus, contracts.teamTaskGet, { task_id: `${taskId}x` }, { subject: s.teamTaskGet(team) }), RemoteError);
      expect(foreign.wire.code).toBe('not_found');
      expect(foreign.wire.message.replace(taskId, 'ID')).toBe(missing.wire.message.replace(`${taskId}x`, 'ID'));
      const cancel = await rejectionOf(
        request(f.bus, contracts.teamTaskCancel, { task_id: taskId, reason: 'not yours' }, { subject: s.teamTaskCancel(team) }),
        RemoteError,
      );
      expect(cancel.wire.code).toBe('not_found');
      // Neither one user nor every user of another team lists it.
      for (const user_id of ['bob', null]) {
        const listed = await request(f.bus, contracts.teamTaskList, { user_id }, { subject: s.teamTaskList(team) });
        expect(listed.tasks.map((t) => t.task_id)).not.toContain(taskId);
      }
    }
    expect((await f.store.get(taskId))?.view.status).not.toBe('cancelled');

    const own = await request(f.bus, contracts.teamTaskList, { user_id: null }, { subject: s.teamTaskList('team-b') });
    expect(own.tasks).toEqual([expect.objectContaining({ task_id: taskId, user_id: 'bob', team: 'team-b' })]);
    const cancelled = await request(
      f.bus,
      contracts.teamTaskCancel,
      { task_id: taskId, user_id: 'bob', reason: 'done' },
      { subject: s.teamTaskCancel('team-b') },
    );
    expect(cancelled.status).toBe('cancelled');
  });

  it("answers the toolbus's taskGet (bare subject, by task id) for a team's task with the roles of its owner (team, user) and what it waits for under its team's subject", async () => {
    const f = await teamsFixture();
    const { event } = submission({ user_id: 'alice', goal: 'tool work' }, { source: '/shared/source', id: 'roles-by-owner' });
    await f.submit('team-b', event);
    await f.submit(DEFAULT_TEAM, event);
    const idB = taskIdFor('team-b', event.source, event.id);
    const idDefault = taskIdFor(DEFAULT_TEAM, event.source, event.id);
    await Promise.all([f.accepted('team-b', idB), f.accepted(DEFAULT_TEAM, idDefault)]);

    // Same user id, two owners: team-b/alice is granted finance, default's alice admin.
    expect(await request(f.bus, contracts.taskGet, { task_id: idB })).toMatchObject({ task_id: idB, team: 'team-b', user_id: 'alice', roles: ['finance'] });
    expect(await request(f.bus, contracts.taskGet, { task_id: idDefault })).toMatchObject({ task_id: idDefault, user_id: 'alice', roles: ['admin'] });
    expect(await request(f.bus, contracts.taskGet, { task_id: idB }, { subject: f.bus.subjects.teamTaskGet('team-b') })).toMatchObject({ roles: ['finance'] });

    // A waiting step on the team's own events subject is what waiting_for reads; nothing is read from the default team's.
    const waiting = makeTaskEvent('step', {
      id: `${idB}:waiting`,
      source: 'hermes/runtime',
      taskId: idB,
      data: { task_id: idB, subtask_id: 's1', step: 1, kind: 'waiting', detail: { waiting_for: 'toolbus' } },
    });
    await f.bus.publish(contracts.taskEvents, waiting, { subject: f.bus.subjects.taskEvents('team-b', idB) });
    expect((await request(f.bus, contracts.taskGet, { task_id: idB })).waiting_for).toBe('toolbus');
    expect((await request(f.bus, contracts.taskGet, { task_id: idDefault })).waiting_for).toBeUndefined();
  });

  it('refuses a team request on a subject naming no team', async () => {
    const f = await teamsFixture();
    const err = await rejectionOf(request(f.bus, contracts.teamTaskGet, { task_id: 't_x' }, { subject: `${f.bus.subjects.taskGet}.Not_A_Team` }), RemoteError);
    expect(err.wire.code).toBe('invalid_payload');
  });
});
