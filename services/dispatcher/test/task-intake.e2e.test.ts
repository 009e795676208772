import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, TraceFlags, context, trace } from '@opentelemetry/api';
import type { JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { encodeJson, startWorkConsumer, submitTask, type Bus, type WorkConsumer } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, taskEventData, taskIdFor, type DeadLetter, type RuntimeJob, type TaskEvent, type TaskSubmitEvent } from '@hermes/contracts';
import { installPropagation } from '@hermes/telemetry';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { assembleDispatcher, dispatcherConfig } from '../src/dispatcher-service.js';
import { connectBus, eventually, kinds, silentLogger, storedMessages, storedJobs, submission, taskEvents, taskView, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

let nats: NatsServerHandle;
const buses: Bus[] = [];
const consumers: WorkConsumer[] = [];

/** A dispatcher's intake on streams of its own, with a handle on the intake consumer to take submissions one by one. */
async function intakeFixture() {
  const bus = await connectBus(nats.url, uniquePrefix('intake'));
  buses.push(bus);
  await bus.ensureStreams(['taskSubmit', 'taskEvents', 'runtimeJobs', 'runtimeJobsAhead', 'deadLetters']);
  await bus.ensureConsumers(['dispatcherIntake']);
  const { store, intake } = await assembleDispatcher({ bus, config: dispatcherConfig({ PLAN_MODE: 'single' }), logger: silentLogger });
  const consumer = await natsHandles(bus).js.consumers.get(bus.subjects.streams.taskSubmit, bus.subjects.consumers.dispatcherIntake);

  const next = async (): Promise<JsMsg> => {
    const msg = await consumer.next({ expires: 2_000 });
    if (!msg) throw new Error('no submission was delivered');
    return msg;
  };
  return {
    bus,
    store,
    intake,
    next,
    submit: (event: TaskSubmitEvent) => bus.publish(contracts.taskSubmit, event, { subject: bus.subjects.taskSubmit(DEFAULT_TEAM) }),
    publishRaw: (body: Uint8Array, headers?: Record<string, string>) => {
      const h = natsHeaders();
      for (const [k, v] of Object.entries(headers ?? {})) h.set(k, v);
      return natsHandles(bus).js.publish(bus.subjects.taskSubmit(DEFAULT_TEAM), body, { headers: h });
    },
    /** Takes the next submission, handles it and acks it, as the intake consumer does. */
    handleNext: async (): Promise<JsMsg> => {
      const msg = await next();
      await intake.handle(msg);
      await msg.ackAck();
      return msg;
    },
    jobs: async () => (await storedJobs(bus)).map((m) => ({ job: m.value as RuntimeJob, headers: m.headers })),
    deadLetters: async () => (await storedMessages(bus, bus.subjects.streams.deadLetters)).map((m) => m.value as DeadLetter),
    rejectedCatchAll: async () =>
      (await storedMessages(bus, bus.subjects.streams.taskEvents, bus.subjects.taskRejected(DEFAULT_TEAM))).map((m) => m.value as TaskEvent),
    events: (taskId: string) => taskEvents(bus, taskId),
  };
}

beforeAll(async () => {
  installPropagation();
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop(1_000)));
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('TaskIntake', () => {
  it('a valid structured submission becomes a running task, one accepted event and one runtime job with the request fields', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission({
      session_id: 'sess_42',
      goal: 'draft the release notes',
      inputs: { repo: 'hermes', since: 'v1.2' },
      tools: ['git_log'],
      budget: { max_steps: 5 },
      stream: true,
      priority: 'high',
    });
    await f.submit(event);

    await f.handleNext();

    const stored = await f.store.get(taskId);
    expect(stored?.view).toMatchObject({
      task_id: taskId,
      user_id: 'u_alice',
      session_id: 'sess_42',
      goal: 'draft the release notes',
      status: 'running',
      source_event: { source: event.source, id: event.id },
      attempts: 0,
    });
    const events = await f.events(taskId);
    expect(kinds(events)).toEqual(['accepted']);
    expect(events[0]).toMatchObject({ subject: taskId, source: expect.stringMatching(/^urn:hermes:[A-Za-z0-9_-]+\/dispatcher$/) });
    expect(taskEventData(events[0]!, 'accepted')).toEqual({
      task_id: taskId,
      user_id: 'u_alice',
      session_id: 'sess_42',
      goal: 'draft the release notes',
      source_event: { source: event.source, id: event.id },
    });
    const jobs = await f.jobs();
    expect(jobs.map((j) => j.job)).toEqual([
      {
        job_id: `${taskId}-main-1`,
        task_id: taskId,
        subtask_id: 'main',
        user_id: 'u_alice',
        roles: ['user'],
        session_id: 'sess_42',
        goal: 'draft the release notes',
        model_role: 'worker',
        kind: 'agent',
        inputs: { repo: 'hermes', since: 'v1.2' },
        tools: ['git_log'],
        budget: { max_steps: 5 },
        stream: true,
        // SUBTASK_TIMEOUT_MS, counted by the runtime from when it starts the job.
        timeout_ms: expect.any(Number),
        // The task's priority 'high' on the LLM semaphore; an opening job gets no step up.
        priority: 2,
      },
    ]);
    expect(jobs[0]!.headers.get('Nats-Msg-Id')).toBe(`${taskId}-main-1`);
  });

  it('a submission without a session continues a new session named after the task', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission();
    await f.submit(event);

    await f.handleNext();

    expect((await f.store.get(taskId))?.view.session_id).toBe(taskId);
    expect((await f.jobs()).map((j) => j.job.session_id)).toEqual([taskId]);
  });

  it('a redelivered submission emits no second accepted event, no second job and does not reset the task', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission();
    await f.submit(event);
    const first = await f.next();
    await f.intake.handle(first);
    first.nak();
    const before = await f.store.get(taskId);

    const again = await f.next();
    expect(again.info.deliveryCount).toBe(2);
    await f.intake.handle(again);
    await again.ackAck();

    expect(await f.store.get(taskId)).toEqual(before);
    expect(kinds(await f.events(taskId))).toEqual(['accepted']);
    expect(await f.jobs()).toHaveLength(1);
  });

  it('a dispatcher that died before marking the task running is finished by the redelivery without duplicate event or job', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission();
    await f.submit(event);
    const first = await f.next();
    await f.intake.handle(first);
    // As if the process had died after publishing the job but before moving the task to running.
    await f.store.update(taskId, (v) => ({ ...v, status: 'accepted' }));
    first.nak();

    const again = await f.next();
    await f.intake.handle(again);
    await again.ackAck();

    expect((await f.store.get(taskId))?.view.status).toBe('running');
    expect(kinds(await f.events(taskId))).toEqual(['accepted']);
    expect((await f.jobs()).map((j) => j.job.job_id)).toEqual([`${taskId}-main-1`]);
  });

  it('a submission of a task that already completed is not dispatched again', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission();
    const done = taskView({
      task_id: taskId,
      source_event: { source: event.source, id: event.id },
      status: 'completed',
      result: { output: 'already done' },
      attempts: 1,
    });
    await f.store.createOrGet(done);
    const before = await f.store.get(taskId);
    await f.submit(event);

    await f.handleNext();

    expect(await f.store.get(taskId)).toEqual(before);
    expect(await f.events(taskId)).toEqual([]);
    expect(await f.jobs()).toEqual([]);
  });

  it('a binary-mode submission (ce-* headers, request as body) is accepted and dispatched', async () => {
    const f = await intakeFixture();
    const taskId = taskIdFor(DEFAULT_TEAM, '/team/binary', 'bin-1');
    await f.publishRaw(encodeJson({ user_id: 'u_dave', goal: 'binary mode works' }), {
      'ce-specversion': '1.0',
      'ce-type': 'io.hermes.task.submit',
      'ce-source': '/team/binary',
      'ce-id': 'bin-1',
      'content-type': 'application/json',
    });

    await f.handleNext();

    expect((await f.store.get(taskId))?.view).toMatchObject({ status: 'running', user_id: 'u_dave', goal: 'binary mode works' });
    expect(kinds(await f.events(taskId))).toEqual(['accepted']);
    expect((await f.jobs()).map((j) => j.job)).toMatchObject([{ task_id: taskId, user_id: 'u_dave', goal: 'binary mode works' }]);
  });

  it('binary-mode headers are matched case-insensitively (Ce-Specversion, Content-Type)', async () => {
    const f = await intakeFixture();
    const taskId = taskIdFor(DEFAULT_TEAM, '/team/canonical', 'bin-2');
    await f.publishRaw(encodeJson({ user_id: 'u_carol', goal: 'canonical header case' }), {
      'Ce-Specversion': '1.0',
      'Ce-Type': 'io.hermes.task.submit',
      'Ce-Source': '/team/canonical',
      'Ce-Id': 'bin-2',
      'Content-Type': 'application/json; charset=utf-8',
    });

    await f.handleNext();

    expect((await f.store.get(taskId))?.view.status).toBe('running');
    expect(await f.rejectedCatchAll()).toEqual([]);
  });

  it('an invalid submission gets a rejected event listing every problem on its task subject and creates nothing', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission();
    const bad = { ...event, data: { user_id: 'u_alice', priority: 'urgent' } };
    await f.publishRaw(encodeJson(bad));

    await f.handleNext();

    const events = await f.events(taskId);
    expect(kinds(events)).toEqual(['rejected']);
    const data = taskEventData(events[0]!, 'rejected')!;
    expect(data.task_id).toBe(taskId);
    expect(data.source_event).toEqual({ source: event.source, id: event.id });
    expect(data.error).toMatchObject({ code: 'invalid_task_event', retryable: false });
    expect(data.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/data/goal', '/data/priority']));
    expect(await f.store.get(taskId)).toBeUndefined();
    expect(await f.jobs()).toEqual([]);
    // Kept for ops with its reason, and gone from the submit queue.
    expect(await f.deadLetters()).toMatchObject([
      { stream: f.bus.subjects.streams.taskSubmit, stream_seq: data.submission!.stream_seq, error: { code: 'invalid_task_event' } },
    ]);
    expect((await natsHandles(f.bus).jsm.streams.info(f.bus.subjects.streams.taskSubmit)).state.messages).toBe(0);
  });

  it('an unparseable submission is rejected on the taskRejected subject', async () => {
    const f = await intakeFixture();
    await f.publishRaw(new TextEncoder().encode('{not json'));

    await f.handleNext();

    const rejected = await f.rejectedCatchAll();
    expect(kinds(rejected)).toEqual(['rejected']);
    const data = taskEventData(rejected[0]!, 'rejected')!;
    expect(data.task_id).toBeUndefined();
    expect(data.error.code).toBe('invalid_task_event');
    expect(data.issues[0]!.message).toMatch(/not valid JSON/);
    expect(await f.jobs()).toEqual([]);
  });

  it('a binary-mode submission whose body is not JSON is rejected on the subject of the task its headers name', async () => {
    const f = await intakeFixture();
    const taskId = taskIdFor(DEFAULT_TEAM, '/team/binary', 'bin-broken');
    await f.publishRaw(new TextEncoder().encode('goal: do it'), {
      'ce-specversion': '1.0',
      'ce-type': 'io.hermes.task.submit',
      'ce-source': '/team/binary',
      'ce-id': 'bin-broken',
    });

    await f.handleNext();

    const events = await f.events(taskId);
    expect(kinds(events)).toEqual(['rejected']);
    const data = taskEventData(events[0]!, 'rejected')!;
    expect(data.source_event).toEqual({ source: '/team/binary', id: 'bin-broken' });
    expect(data.issues[0]!.message).toMatch(/not valid JSON/);
    expect(await f.rejectedCatchAll()).toEqual([]);
  });

  it('a submission without a usable source or id is rejected on the taskRejected subject', async () => {
    const f = await intakeFixture();
    const { event } = submission();
    await f.publishRaw(encodeJson({ ...event, id: '' }));

    await f.handleNext();

    const rejected = await f.rejectedCatchAll();
    expect(kinds(rejected)).toEqual(['rejected']);
    expect(taskEventData(rejected[0]!, 'rejected')!.issues.map((i) => i.path)).toContain('/id');
  });

  it('an invalid resubmission of an existing task is rejected on the catch-all subject, not on its own, and changes nothing', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission();
    await f.submit(event);
    await f.handleNext();
    const before = await f.store.get(taskId);

    await f.publishRaw(encodeJson({ ...event, data: { user_id: 'u_alice' } }));
    await f.handleNext();

    expect(kinds(await f.events(taskId))).toEqual(['accepted']);
    expect(await f.store.get(taskId)).toEqual(before);
    const [rejected] = await f.rejectedCatchAll();
    expect(taskEventData(rejected!, 'rejected')).toMatchObject({ task_id: taskId, error: { code: 'invalid_task_event' }, submission: { stream_seq: 2 } });
  });

  it('the id of an existing task published again is answered duplicate, and with another request duplicate_conflict, on the rejected subject', async () => {
    const f = await intakeFixture();
    const { event, taskId } = submission({ goal: 'count the open incidents' });
    await f.submit(event);
    await f.handleNext();
    const before = await f.store.get(taskId);

    // Published without a Nats-Msg-Id, as a retry after the duplicate window would arrive.
    const same = await f.publishRaw(encodeJson(event));
    await f.handleNext();
    const other = await f.publishRaw(encodeJson({ ...event, data: { ...event.data, goal: 'delete the open incidents' } }), { 'Nats-Msg-Id': 'retry-7' });
    await f.handleNext();

    expect(kinds(await f.events(taskId))).toEqual(['accepted']);
    expect(await f.store.get(taskId)).toEqual(before);
    expect((await f.jobs()).length).toBe(1);
    const answers = (await f.rejectedCatchAll()).map((e) => taskEventData(e, 'rejected'));
    expect(answers).toMatchObject([
      { task_id: taskId, error: { code: 'duplicate', retryable: false }, submission: { stream_seq: same.seq } },
      { task_id: taskId, error: { code: 'duplicate_conflict', retryable: false }, submission: { stream_seq: other.seq, msg_id: 'retry-7' } },
    ]);
    // A plain re-send is no fault; a conflicting one is kept for ops.
    expect((await f.deadLetters()).map((d) => [d.stream_seq, d.error.code])).toEqual([[other.seq, 'duplicate_conflict']]);
  });

  it("the submission's traceparent extension becomes the trace parent of the runtime job", async () => {
    const f = await intakeFixture();
    const submitterTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const { event, taskId } = submission({}, { traceparent: `00-${submitterTrace}-00f067aa0ba902b7-01` });
    // The NATS message itself carries another trace, so the test tells the two sources apart.
    const transport = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      spanId: 'bbbbbbbbbbbbbbbb',
      traceFlags: TraceFlags.SAMPLED,
    });
    await context.with(transport, () => f.submit(event));
    consumers.push(
      await startWorkConsumer(f.bus, { stream: f.bus.subjects.streams.taskSubmit, durable: f.bus.subjects.consumers.dispatcherIntake }, (msg) =>
        f.intake.handle(msg),
      ),
    );

    const [job] = await eventually(
      async () => {
        const jobs = await f.jobs();
        return jobs.length > 0 ? jobs : undefined;
      },
      5_000,
      'the runtime job',
    );

    expect(job!.job.task_id).toBe(taskId);
    expect(job!.headers.get('traceparent').split('-')[1]).toBe(submitterTrace);
  });

  it('submissions published with submitTask are taken by the intake work consumer and acknowledged', async () => {
    const f = await intakeFixture();
    consumers.push(
      await startWorkConsumer(f.bus, { stream: f.bus.subjects.streams.taskSubmit, durable: f.bus.subjects.consumers.dispatcherIntake }, (msg) =>
        f.intake.handle(msg),
      ),
    );

    const a = await submitTask(f.bus, { user_id: 'u_bob', goal: 'first' }, { team: DEFAULT_TEAM, source: '/team/wired', id: 'w-1' });
    const b = await submitTask(f.bus, { user_id: 'u_bob', goal: 'second' }, { team: DEFAULT_TEAM, source: '/team/wired', id: 'w-2' });

    const jobs = await eventually(
      async () => {
        const all = await f.jobs();
        return all.length === 2 ? all : undefined;
      },
      5_000,
      'two jobs',
    );
    expect(jobs.map((j) => j.job.task_id).sort()).toEqual([a.taskId, b.taskId].sort());
    // Work-queue retention: acknowledged submissions leave the stream.
    await eventually(
      async () => ((await natsHandles(f.bus).jsm.streams.info(f.bus.subjects.streams.taskSubmit)).state.messages === 0 ? true : undefined),
      5_000,
      'acks',
    );
  });
});
