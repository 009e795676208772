import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { encodeJson, startWorkConsumer, type Bus, type WorkConsumer } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, taskEventData, taskIdFor, type DeadLetter, type TaskEvent } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { rejectDeadSubmission } from '../src/dead-submissions.js';
import { connectBus, eventually, kinds, silentLogger, storedMessages, submission, taskEvents, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

// The intake consumer's dead-letter hook, on a consumer whose handler blows the stack on every
// submission (as a 5,000-deep `inputs` once did in the task store).
let nats: NatsServerHandle;
let bus: Bus;
let consumer: WorkConsumer;
const existing = new Set<string>();

const deadLetters = async () => (await storedMessages(bus, bus.subjects.streams.deadLetters)).map((m) => m.value as DeadLetter);

beforeAll(async () => {
  nats = await startNatsServer();
  bus = await connectBus(nats.url, uniquePrefix('deadsub'));
  await bus.ensureStreams(['taskSubmit', 'taskEvents', 'deadLetters']);
  await bus.ensureConsumers(['dispatcherIntake']);
  consumer = await startWorkConsumer(
    bus,
    {
      stream: bus.subjects.streams.taskSubmit,
      durable: bus.subjects.consumers.dispatcherIntake,
      onDeadLetter: rejectDeadSubmission({ bus, logger: silentLogger, taskExists: async (taskId) => existing.has(taskId) }),
    },
    async () => {
      throw new RangeError('Maximum call stack size exceeded');
    },
  );
});

afterAll(async () => {
  await consumer?.stop(100);
  await bus?.drain();
  await cleanupAll();
});

describe('a dead-lettered submission', () => {
  it('gets a rejected event on its task subject with the real error and the message it answers', async () => {
    const { event, taskId } = submission();
    await bus.publish(contracts.taskSubmit, event, { subject: bus.subjects.taskSubmit(DEFAULT_TEAM), msgId: taskId });

    const [rejected] = await eventually(
      async () => {
        const events = await taskEvents(bus, taskId);
        return events.length > 0 ? events : undefined;
      },
      10_000,
      'the rejected event',
    );
    expect(kinds([rejected!])).toEqual(['rejected']);
    const data = taskEventData(rejected!, 'rejected');
    const record = (await deadLetters()).find((d) => d.headers['Nats-Msg-Id']?.[0] === taskId);
    expect(data).toEqual({
      task_id: taskId,
      source_event: { source: event.source, id: event.id },
      error: { code: 'internal', message: 'Maximum call stack size exceeded', retryable: false, details: { error_name: 'RangeError' } },
      issues: [],
      submission: { stream_seq: record!.stream_seq, msg_id: taskId },
    });
  });

  it('names its task from the ce-* headers of a binary-mode event', async () => {
    const h = natsHeaders();
    for (const [k, v] of Object.entries({ 'ce-specversion': '1.0', 'ce-type': 'io.hermes.task.submit', 'ce-source': '/binary', 'ce-id': 'b-1' })) h.set(k, v);
    await natsHandles(bus).js.publish(bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson({ user_id: 'u_alice', goal: 'binary' }), { headers: h });

    const taskId = taskIdFor(DEFAULT_TEAM, '/binary', 'b-1');
    const events = await eventually(
      async () => {
        const e = await taskEvents(bus, taskId);
        return e.length > 0 ? e : undefined;
      },
      10_000,
      'the rejected event',
    );
    expect(kinds(events)).toEqual(['rejected']);
  });

  it('of a task that already exists, or without a readable source and id, is answered on the rejected subject', async () => {
    const { event, taskId } = submission();
    existing.add(taskId);
    await bus.publish(contracts.taskSubmit, event, { subject: bus.subjects.taskSubmit(DEFAULT_TEAM), msgId: taskId });
    await natsHandles(bus).js.publish(bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson({ specversion: '1.0', data: {} }), { msgID: 'nameless' });

    await eventually(
      async () => {
        const d = await deadLetters();
        return d.some((x) => x.headers['Nats-Msg-Id']?.[0] === taskId) && d.some((x) => x.headers['Nats-Msg-Id']?.[0] === 'nameless') ? true : undefined;
      },
      10_000,
      'both dead letters',
    );
    expect(await taskEvents(bus, taskId)).toEqual([]);
    const answers = await eventually(
      async () => {
        const r = (await storedMessages(bus, bus.subjects.streams.taskEvents, bus.subjects.taskRejected(DEFAULT_TEAM))).map((m) =>
          taskEventData(m.value as TaskEvent, 'rejected')!,
        );
        return r.length === 2 ? r : undefined;
      },
      10_000,
      'two answers on the rejected subject',
    );
    expect(answers.map((a) => [a.task_id, a.submission?.msg_id, a.error.code])).toEqual(
      expect.arrayContaining([
        [taskId, taskId, 'internal'],
        [undefined, 'nameless', 'internal'],
      ]),
    );
  });
});
