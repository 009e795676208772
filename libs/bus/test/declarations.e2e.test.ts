import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { OutgoingPayloadError, STREAM_MAX_CONSUMERS, consumerConfig, maxDeliverBackstop, streamConfig, submitTask } from '@hermes/bus';
import { AckPolicy } from '@nats-io/jetstream';
import { DEFAULT_TEAM, contracts, makeTaskEvent, subjectsFor, type TaskRequest } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { connectBus, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

const ALL_STREAMS = [
  'taskSubmit',
  'taskEvents',
  'runtimeJobs',
  'runtimeJobsAhead',
  'runtimeResults',
  'toolAudit',
  'memoryJobs',
  'deadLetters',
  'recordings',
  'teamEvents',
] as const;
const ALL_CONSUMERS = [
  'dispatcherIntake',
  'dispatcherResults',
  'runtimeJobs',
  'runtimeJobsAhead',
  'memoryExtract',
  'memoryWrites',
  'dispatcherTriggers',
] as const;

let nats: NatsServerHandle;
const buses: Bus[] = [];

async function open(prefix: string, tuning: Parameters<typeof connectBus>[1] = {}): Promise<Bus> {
  const bus = await connectBus(nats.url, { prefix, ...tuning });
  buses.push(bus);
  return bus;
}

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('consumer limits', () => {
  it('a stream takes no more consumers than its max_consumers, so a caller cannot create hundreds of durables', async () => {
    const bus = await open(uniquePrefix('limit'));
    await bus.ensureStreams(['toolAudit']);
    const stream = bus.subjects.streams.toolAudit;
    expect((await natsHandles(bus).jsm.streams.info(stream)).config.max_consumers).toBe(STREAM_MAX_CONSUMERS.toolAudit);
    let created = 0;
    let refusal: Error | undefined;
    for (let i = 0; i < 200 && !refusal; i++) {
      try {
        await natsHandles(bus).jsm.consumers.add(stream, { durable_name: `squat-${i}`, ack_policy: AckPolicy.Explicit });
        created += 1;
      } catch (err) {
        refusal = err as Error;
      }
    }
    // The real server's refusal, once the limit is reached.
    expect(refusal?.message).toMatch(/maximum consumers limit reached/);
    expect(created).toBe(STREAM_MAX_CONSUMERS.toolAudit);
  });

  it('every stream has a consumer limit and every durable a max_ack_pending', () => {
    const s = subjectsFor('x');
    for (const key of ALL_STREAMS) expect(streamConfig(s, key).max_consumers, key).toBeGreaterThan(0);
    for (const key of ALL_CONSUMERS) expect(consumerConfig(s, key).config.max_ack_pending, key).toBeGreaterThan(0);
  });

  it('a stream created without a limit (before this release) is still declared: it keeps its own, nats-server cannot change it', async () => {
    const bus = await open(uniquePrefix('old'));
    const { max_consumers: _limit, ...old } = streamConfig(bus.subjects, 'toolAudit');
    await natsHandles(bus).jsm.streams.add(old);
    await bus.ensureStreams(['toolAudit'], { tuning: { auditMaxAgeMs: 86_400_000 } });
    const config = (await natsHandles(bus).jsm.streams.info(bus.subjects.streams.toolAudit)).config;
    expect(config.max_consumers).toBe(-1);
    // The rest of the update still happened.
    expect(config.max_age).toBe(86_400_000 * 1_000_000);
  });
});

describe('stream and consumer declaration', () => {
  it('two connections declaring the same streams and consumers at once, and again later, end with one of each', async () => {
    const prefix = uniquePrefix('decl');
    const [a, b] = await Promise.all([open(prefix), open(prefix)]);

    await Promise.all([a.ensureStreams([...ALL_STREAMS]), b.ensureStreams([...ALL_STREAMS])]);
    await Promise.all([a.ensureConsumers([...ALL_CONSUMERS]), b.ensureConsumers([...ALL_CONSUMERS])]);
    await a.ensureStreams([...ALL_STREAMS]);
    await b.ensureConsumers([...ALL_CONSUMERS]);

    const names: string[] = [];
    for await (const s of natsHandles(a).jsm.streams.list()) if (s.config.name.startsWith(prefix.toUpperCase())) names.push(s.config.name);
    expect(names.sort()).toEqual(Object.values(a.subjects.streams).sort());
    const jobConsumers: string[] = [];
    for await (const c of natsHandles(a).jsm.consumers.list(a.subjects.streams.runtimeJobs)) jobConsumers.push(c.name);
    expect(jobConsumers).toEqual([a.subjects.consumers.runtimeJobs]);
    // The memory work queue has two consumers, each on its own subject (a work queue allows that only when they do not overlap).
    const memoryConsumers: [string, string | undefined][] = [];
    for await (const c of natsHandles(a).jsm.consumers.list(a.subjects.streams.memoryJobs)) memoryConsumers.push([c.name, c.config.filter_subject]);
    expect(memoryConsumers.sort()).toEqual([
      [a.subjects.consumers.memoryExtract, a.subjects.memoryExtract],
      [a.subjects.consumers.memoryWrites, a.subjects.memoryWrite],
    ]);
  });

  it('declaring again with changed tuning updates the stream and the consumer in place', async () => {
    const prefix = uniquePrefix('tune');
    const before = await open(prefix, { tuning: { duplicateWindowMs: 60_000, runtimeAckWaitMs: 30_000, maxDeliveries: 5 } });
    await before.ensureStreams(['runtimeJobs', 'taskSubmit']);
    await before.ensureConsumers(['runtimeJobs']);
    await before.publish(contracts.runtimeJobs, {
      job_id: 'j1',
      task_id: 't1',
      subtask_id: 's1',
      user_id: 'u1',
      session_id: 'x1',
      goal: 'keep me',
      model_role: 'worker',
    });

    const after = await open(prefix, { tuning: { duplicateWindowMs: 5_000, runtimeAckWaitMs: 2_000, maxDeliveries: 2 } });
    await after.ensureStreams(['runtimeJobs', 'taskSubmit']);
    await after.ensureConsumers(['runtimeJobs']);

    // Only the submit stream's duplicate window is tunable (see stream-specs).
    const stream = await natsHandles(after).jsm.streams.info(after.subjects.streams.taskSubmit);
    expect(stream.config.duplicate_window).toBe(5_000 * 1_000_000);
    expect((await natsHandles(after).jsm.streams.info(after.subjects.streams.runtimeJobs)).state.messages).toBe(1);
    const consumer = await natsHandles(after).jsm.consumers.info(after.subjects.streams.runtimeJobs, after.subjects.consumers.runtimeJobs);
    expect(consumer.config.ack_wait).toBe(2_000 * 1_000_000);
    // JetStream's backstop sits a little above the dead-letter bound, and follows it.
    expect(consumer.config.max_deliver).toBe(maxDeliverBackstop(2));
    expect(consumer.num_pending).toBe(1);
  });

  it('createOnly leaves an existing stream as its owner configured it', async () => {
    const prefix = uniquePrefix('own');
    const owner = await open(prefix, { tuning: { duplicateWindowMs: 5_000 } });
    await owner.ensureStreams(['taskSubmit']);
    const user = await open(prefix);
    await user.ensureStreams(['taskSubmit', 'taskEvents'], { createOnly: true });
    expect((await natsHandles(user).jsm.streams.info(user.subjects.streams.taskSubmit)).config.duplicate_window).toBe(5_000 * 1_000_000);
    expect((await natsHandles(user).jsm.streams.info(user.subjects.streams.taskEvents)).config.name).toBe(user.subjects.streams.taskEvents);
  });

  it('a tuning the server refuses surfaces as an error instead of being ignored', async () => {
    const prefix = uniquePrefix('bad');
    const bus = await open(prefix, { tuning: { duplicateWindowMs: 60_000 } });
    await bus.ensureStreams(['taskSubmit']);
    // The duplicate window may not exceed the stream's max age (7 days).
    const wider = await open(prefix, { tuning: { duplicateWindowMs: 8 * 86_400_000 } });
    await expect(wider.ensureStreams(['taskSubmit'])).rejects.toThrow(/duplicates window/i);
  });
});

describe('submitTask', () => {
  const request: TaskRequest = { user_id: 'u1', goal: 'summarise the release notes' };

  it('a second submission with the same id is reported as a duplicate and stored once', async () => {
    const bus = await open(uniquePrefix('sub'));
    await bus.ensureStreams(['taskSubmit']);

    const first = await submitTask(bus, request, { team: DEFAULT_TEAM, source: '/hermes/test', id: 'evt-1' });
    const second = await submitTask(bus, request, { team: DEFAULT_TEAM, source: '/hermes/test', id: 'evt-1' });
    const other = await submitTask(bus, request, { team: DEFAULT_TEAM, source: '/hermes/test', id: 'evt-2' });

    expect(first).toMatchObject({ eventId: 'evt-1', duplicate: false });
    expect(second).toEqual({ ...first, duplicate: true });
    expect(other.taskId).not.toBe(first.taskId);
    const info = await natsHandles(bus).jsm.streams.info(bus.subjects.streams.taskSubmit);
    expect(info.state.messages).toBe(2);
  });

  it('a task request that breaks its contract is refused before anything is published', async () => {
    const bus = await open(uniquePrefix('subbad'));
    await bus.ensureStreams(['taskSubmit']);
    const invalid = { user_id: 'has spaces', goal: '' } as TaskRequest;

    const err: unknown = await submitTask(bus, invalid, { team: DEFAULT_TEAM, source: '/hermes/test' }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(OutgoingPayloadError);
    expect((err as OutgoingPayloadError).issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/data/user_id', '/data/goal']));
    const info = await natsHandles(bus).jsm.streams.info(bus.subjects.streams.taskSubmit);
    expect(info.state.messages).toBe(0);
  });
});

describe('publish without an ack', () => {
  it('still lands in the stream, once per msgId, and a validation failure still throws', async () => {
    const bus = await open(uniquePrefix('noack'));
    await bus.ensureStreams(['taskEvents']);
    const event = makeTaskEvent('step', {
      id: 'step-1',
      source: 'hermes/test',
      taskId: 't_noack',
      data: { task_id: 't_noack', subtask_id: 'main', step: 1, kind: 'llm_call' },
    });
    const subject = bus.subjects.taskEvents(DEFAULT_TEAM, 't_noack');

    expect(await bus.publish(contracts.taskEvents, event, { subject, msgId: 'step-1', ack: false })).toBeUndefined();
    await bus.publish(contracts.taskEvents, event, { subject, msgId: 'step-1', ack: false });
    await bus.publish(contracts.taskEvents, { ...event, id: 'step-2' }, { subject, msgId: 'step-2', ack: false });
    await natsHandles(bus).nc.flush();

    const info = await natsHandles(bus).jsm.streams.info(bus.subjects.streams.taskEvents);
    expect(info.state.messages).toBe(2);
    await expect(bus.publish(contracts.taskEvents, { ...event, data: {} } as never, { subject, ack: false })).rejects.toBeInstanceOf(OutgoingPayloadError);
  });
});

describe('kv', () => {
  it('opening a bucket twice, from two connections, gives the same data', async () => {
    const prefix = uniquePrefix('kv');
    const [a, b] = await Promise.all([open(prefix), open(prefix)]);
    const [kvA, kvB] = await Promise.all([a.kv('tasks'), b.kv('tasks')]);

    await kvA.put('t1', 'accepted');
    await kvA.put('t1', 'running');
    const again = await a.kv('tasks');

    expect((await kvB.get('t1'))?.string()).toBe('running');
    expect((await again.get('t1'))?.string()).toBe('running');
    expect((await again.status()).history).toBe(1);
  });

  it('every opener of a catalog bucket gets its declared config, whoever opens it first', async () => {
    const prefix = uniquePrefix('kvcfg');
    const [a, b] = await Promise.all([open(prefix), open(prefix, { tuning: { toolCacheMaxTtlMs: 5_000 } })]);

    const [checkpoints, again] = await Promise.all([a.kv('checkpoints'), b.kv('checkpoints')]);
    const cache = await a.kv('toolCache', { tuning: { toolCacheMaxTtlMs: 60_000 } });
    const tasks = await b.kv('tasks');

    expect((await checkpoints.status()).ttl).toBe(7 * 86_400_000);
    expect((await again.status()).ttl).toBe(7 * 86_400_000);
    expect((await cache.status()).ttl).toBe(60_000);
    expect(await tasks.status()).toMatchObject({ ttl: 0, history: 1, bucket: `${prefix}_tasks` });
  });
});

describe('ensureStreams tuning', () => {
  it("a tuning given to ensureStreams overrides the connection's for that declaration", async () => {
    const prefix = uniquePrefix('audit');
    const bus = await open(prefix);

    await bus.ensureStreams(['toolAudit'], { tuning: { auditMaxAgeMs: 3_600_000 } });

    expect((await natsHandles(bus).jsm.streams.info(bus.subjects.streams.toolAudit)).config.max_age).toBe(3_600_000 * 1_000_000);
  });
});
