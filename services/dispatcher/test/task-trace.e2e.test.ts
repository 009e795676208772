import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, context } from '@opentelemetry/api';
import type { Bus } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, taskEventData, type RuntimeJob, type TaskView } from '@hermes/contracts';
import { installPropagation } from '@hermes/telemetry';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { TaskStore } from '../src/task-store.js';
import { TaskIntake } from '../src/task-intake.js';
import { TaskIndex } from '../src/task-index.js';
import { PlanCoordinator } from '../src/plan-coordinator.js';
import { connectBus, eventually, silentLogger, storedJobs, submission, taskEvents, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

let nats: NatsServerHandle;
const buses: Bus[] = [];

beforeAll(async () => {
  installPropagation();
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

/** A planning dispatcher (intake and coordinator) on streams of its own. */
async function plannerFixture() {
  const bus = await connectBus(nats.url, uniquePrefix('trace'));
  buses.push(bus);
  await bus.ensureStreams(['taskSubmit', 'taskEvents', 'runtimeJobs', 'runtimeJobsAhead']);
  await bus.ensureConsumers(['dispatcherIntake']);
  const store = new TaskStore(await bus.kv('tasks'));
  const index = new TaskIndex(await bus.kv('taskIndex'));
  const settings = {
    maxSubtasks: 5,
    maxRetries: 2,
    maxReplans: 0,
    retryBaseMs: 10,
    subtaskTimeoutMs: 60_000,
    redispatchAfterMs: 2_000,
    inputTimeoutMs: 60_000,
    inputTimeoutPolicy: 'fail' as const,
    reviewRounds: 1,
  };
  const coordinator = new PlanCoordinator({ bus, store, index, logger: silentLogger, settings, rolesOf: () => ['user'] });
  const intake = new TaskIntake({ bus, store, logger: silentLogger, index, coordinator, planMode: 'auto' });
  const consumer = await natsHandles(bus).js.consumers.get(bus.subjects.streams.taskSubmit, bus.subjects.consumers.dispatcherIntake);
  const jobs = async () => (await storedJobs(bus)).map((m) => ({ job: m.value as RuntimeJob, traceparent: m.headers.get('traceparent') }));
  return { bus, store, intake, coordinator, consumer, jobs };
}

const traceOf = (traceparent: string | undefined) => traceparent?.split('-')[1];

describe('a task keeps its trace', () => {
  it('the trace context is stored with the task, its id in the accepted event, and jobs published later from outside any trace continue it', async () => {
    const f = await plannerFixture();
    const submitterTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const { event, taskId } = submission({ goal: 'two steps' }, { traceparent: `00-${submitterTrace}-00f067aa0ba902b7-01` });
    await f.bus.publish(contracts.taskSubmit, event, { subject: f.bus.subjects.taskSubmit(DEFAULT_TEAM) });
    const msg = await f.consumer.next({ expires: 2_000 });
    await f.intake.handle(msg!);
    msg!.ack();

    const stored = (await f.store.get(taskId))!.view;
    expect(stored.trace_context?.trace_id).toBe(submitterTrace);
    expect(stored.trace_context?.traceparent).toMatch(new RegExp(`^00-${submitterTrace}-[0-9a-f]{16}-01$`));
    const accepted = (await taskEvents(f.bus, taskId)).map((e) => taskEventData(e, 'accepted')).find(Boolean);
    expect(accepted?.trace_id).toBe(submitterTrace);
    const [planJob] = await f.jobs();
    expect(traceOf(planJob!.traceparent)).toBe(submitterTrace);

    // The plan's result arrives with no trace at all (as from a sweep or a timer): the subtask jobs still join the task's trace.
    const plan = {
      subtasks: [
        { id: 'a', intent: 'first', depends_on: [] },
        { id: 'b', intent: 'second', depends_on: [] },
      ],
    };
    await context.with(ROOT_CONTEXT, () =>
      f.coordinator.onResult({
        job_id: planJob!.job.job_id,
        task_id: taskId,
        subtask_id: planJob!.job.subtask_id,
        attempt: 1,
        outcome: 'succeeded',
        usage: { input_tokens: 1, output_tokens: 1 },
        output: JSON.stringify(plan),
        plan,
      }),
    );
    const subtaskJobs = await eventually(
      async () => {
        const all = (await f.jobs()).filter((j) => j.job.kind !== 'plan');
        return all.length === 2 ? all : undefined;
      },
      5_000,
      'the subtask jobs',
    );
    expect(subtaskJobs.map((j) => traceOf(j.traceparent))).toEqual([submitterTrace, submitterTrace]);
    // They carry the task and user as baggage too, so every service's log lines for them name the task.
    const baggage = (await storedJobs(f.bus)).map((m) => m.headers.get('baggage')).at(-1);
    expect(baggage).toContain(`hermes.task_id=${taskId}`);
    expect(baggage).toContain('hermes.user_id=u_alice');
  });

  it('a task stored without a trace context (created before tracing) is scheduled as before, in whatever trace is active', async () => {
    const f = await plannerFixture();
    const { event, taskId } = submission({ goal: 'old task' });
    await f.bus.publish(contracts.taskSubmit, event, { subject: f.bus.subjects.taskSubmit(DEFAULT_TEAM) });
    const msg = await f.consumer.next({ expires: 2_000 });
    await f.intake.handle(msg!);
    msg!.ack();
    await f.store.update(taskId, (v): TaskView => {
      const { trace_context: _dropped, ...rest } = v;
      return rest;
    });
    const [planJob] = await f.jobs();
    const plan = { subtasks: [{ id: 'a', intent: 'only', depends_on: [] }] };

    await f.coordinator.onResult({
      job_id: planJob!.job.job_id,
      task_id: taskId,
      subtask_id: 'plan',
      attempt: 1,
      outcome: 'succeeded',
      usage: { input_tokens: 1, output_tokens: 1 },
      output: '',
      plan,
    });

    const jobs = await eventually(
      async () => {
        const all = (await f.jobs()).filter((j) => j.job.kind !== 'plan');
        return all.length === 1 ? all : undefined;
      },
      5_000,
      'the subtask job',
    );
    expect(jobs[0]!.job.subtask_id).toBe('a');
    expect(jobs[0]!.traceparent).toBe('');
  });
});
