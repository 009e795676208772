import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeContract, type Bus, type WorkConsumer } from '@hermes/bus';
import { contracts, taskEventData, wireError, type RuntimeResult } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { assembleDispatcher, dispatcherConfig } from '../src/dispatcher-service.js';
import { connectBus, eventually, kinds, silentLogger, taskEvents, taskView, uniquePrefix } from './support.js';

let nats: NatsServerHandle;
const buses: Bus[] = [];
const consumers: WorkConsumer[] = [];

async function resultsFixture() {
  const bus = await connectBus(nats.url, uniquePrefix('results'));
  buses.push(bus);
  await bus.ensureStreams(['taskEvents', 'runtimeResults']);
  await bus.ensureConsumers(['dispatcherResults']);
  const { store, coordinator } = await assembleDispatcher({ bus, config: dispatcherConfig({ PLAN_MODE: 'single' }), logger: silentLogger });
  return { bus, store, coordinator, events: (taskId: string) => taskEvents(bus, taskId) };
}

function result(taskId: string, r: Partial<RuntimeResult> = {}): RuntimeResult {
  return {
    job_id: `${taskId}-main`,
    task_id: taskId,
    subtask_id: 'main',
    attempt: 1,
    outcome: 'succeeded',
    output: 'the answer',
    usage: { input_tokens: 100, output_tokens: 20 },
    model: 'scripted',
    ...r,
  };
}

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop(1_000)));
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('task results', () => {
  it('a succeeded result completes the task with the output, summed usage and the attempt, and emits completed', async () => {
    const f = await resultsFixture();
    await f.store.createOrGet(taskView({ task_id: 't_ok', status: 'running', attempts: 1, usage: { input_tokens: 10, output_tokens: 5 } }));

    await f.coordinator.onResult(result('t_ok', { attempt: 2, output: 'release notes drafted' }));

    const view = (await f.store.get('t_ok'))?.view;
    expect(view).toMatchObject({
      status: 'completed',
      result: { output: 'release notes drafted' },
      usage: { input_tokens: 110, output_tokens: 25 },
      attempts: 2,
    });
    expect(view?.error).toBeUndefined();
    const events = await f.events('t_ok');
    expect(kinds(events)).toEqual(['completed']);
    expect(events[0]).toMatchObject({ subject: 't_ok', source: expect.stringMatching(/^urn:hermes:[A-Za-z0-9_-]+\/dispatcher$/) });
    expect(taskEventData(events[0]!, 'completed')).toEqual({
      task_id: 't_ok',
      result: { output: 'release notes drafted' },
      usage: { input_tokens: 110, output_tokens: 25 },
    });
  });

  it('attempts never go down when a result reports an earlier attempt', async () => {
    const f = await resultsFixture();
    await f.store.createOrGet(taskView({ task_id: 't_attempts', status: 'running', attempts: 3 }));

    await f.coordinator.onResult(result('t_attempts', { attempt: 1 }));

    expect((await f.store.get('t_attempts'))?.view.attempts).toBe(3);
  });

  it('a failed result fails the task and emits failed with the wire error', async () => {
    const f = await resultsFixture();
    await f.store.createOrGet(taskView({ task_id: 't_fail', status: 'running' }));
    const error = wireError('llm_error', 'LLM provider rejected the request (400)', { status: 400 });

    await f.coordinator.onResult(result('t_fail', { outcome: 'failed', output: undefined, error, attempt: 3, usage: { input_tokens: 0, output_tokens: 0 } }));

    expect((await f.store.get('t_fail'))?.view).toMatchObject({ status: 'failed', error, attempts: 3 });
    const events = await f.events('t_fail');
    expect(kinds(events)).toEqual(['failed']);
    expect(taskEventData(events[0]!, 'failed')).toEqual({ task_id: 't_fail', error, usage: { input_tokens: 0, output_tokens: 0 } });
  });

  it('a failed result without an error is recorded as an internal error, which is retried as a new job', async () => {
    const f = await resultsFixture();
    await f.store.createOrGet(taskView({ task_id: 't_noerr', status: 'running' }));

    await f.coordinator.onResult(result('t_noerr', { outcome: 'failed', output: undefined }));

    const main = (await f.store.get('t_noerr'))?.view.plan?.subtasks[0];
    expect(main).toMatchObject({ id: 'main', status: 'pending', attempts: 1, error: { code: 'internal', retryable: true } });
    expect(kinds(await f.events('t_noerr'))).toEqual([]);
  });

  it('a second result for an ended task changes nothing and emits no second terminal event', async () => {
    const f = await resultsFixture();
    await f.store.createOrGet(taskView({ task_id: 't_twice', status: 'running' }));
    await f.coordinator.onResult(result('t_twice', { output: 'first answer' }));
    const ended = await f.store.get('t_twice');

    await f.coordinator.onResult(result('t_twice', { output: 'second answer', attempt: 2 }));
    await f.coordinator.onResult(result('t_twice', { outcome: 'failed', output: undefined, error: wireError('llm_unavailable', 'down'), attempt: 3 }));

    expect(await f.store.get('t_twice')).toEqual(ended);
    const events = await f.events('t_twice');
    expect(kinds(events)).toEqual(['completed']);
    expect(taskEventData(events[0]!, 'completed')?.result.output).toBe('first answer');
  });

  it('a result for an unknown task is dropped without throwing', async () => {
    const f = await resultsFixture();

    await expect(f.coordinator.onResult(result('t_unknown'))).resolves.toBeUndefined();

    expect(await f.store.get('t_unknown')).toBeUndefined();
    expect(await f.events('t_unknown')).toEqual([]);
  });

  it('results published on the results stream are recorded by the results consumer', async () => {
    const f = await resultsFixture();
    await f.store.createOrGet(taskView({ task_id: 't_wired', status: 'running' }));
    consumers.push(
      await consumeContract(
        f.bus,
        contracts.runtimeResults,
        { stream: f.bus.subjects.streams.runtimeResults, durable: f.bus.subjects.consumers.dispatcherResults },
        (r) => f.coordinator.onResult(r),
      ),
    );

    await f.bus.publish(contracts.runtimeResults, result('t_wired', { output: 'over the bus' }));

    const view = await eventually(
      async () => {
        const v = (await f.store.get('t_wired'))?.view;
        return v?.status === 'completed' ? v : undefined;
      },
      5_000,
      'the task to complete',
    );
    expect(view.result).toEqual({ output: 'over the bus' });
  });
});
