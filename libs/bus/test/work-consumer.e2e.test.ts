import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus } from '@hermes/bus';
import { consumeContract, encodeJson, RemoteError, startWorkConsumer, type WorkConsumer } from '@hermes/bus';
import { contracts, wireError, type RuntimeJob } from '@hermes/contracts';
import { startChildService } from '@hermes/testkit';
import { connectBus, eventually, fixture, runtimeJob, storedDeadLetters, natsForFile, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

const file = natsForFile();
const { buses, consumers } = file;

/** A bus whose runtimeJobs stream and consumer exist, with the given ack wait. */
async function jobsBus(prefix: string, ackWaitMs = 30_000): Promise<Bus> {
  const bus = await connectBus(file.nats.url, { prefix, tuning: { runtimeAckWaitMs: ackWaitMs } });
  buses.push(bus);
  await bus.ensureStreams(['runtimeJobs']);
  await bus.ensureConsumers(['runtimeJobs']);
  return bus;
}

function jobsConsumerOpts(bus: Bus) {
  return { stream: bus.subjects.streams.runtimeJobs, durable: bus.subjects.consumers.runtimeJobs };
}

async function consumerState(bus: Bus) {
  return natsHandles(bus).jsm.consumers.info(bus.subjects.streams.runtimeJobs, bus.subjects.consumers.runtimeJobs);
}

async function track(c: Promise<WorkConsumer>): Promise<WorkConsumer> {
  const consumer = await c;
  consumers.push(consumer);
  return consumer;
}

describe('startWorkConsumer', () => {
  it('a message whose handler throws is redelivered and acked once the handler succeeds', async () => {
    const bus = await jobsBus(uniquePrefix('retry'));
    const deliveries: number[] = [];
    await track(
      startWorkConsumer(bus, { ...jobsConsumerOpts(bus), retryDelayMs: 50 }, async (msg) => {
        deliveries.push(msg.info.deliveryCount);
        if (msg.info.deliveryCount === 1) throw new Error('transient failure');
      }),
    );

    await bus.publish(contracts.runtimeJobs, runtimeJob('j1'));

    await eventually(() => (deliveries.length >= 2 ? true : undefined), 5_000, 'the redelivery');
    await eventually(
      async () => ((await natsHandles(bus).jsm.streams.info(bus.subjects.streams.runtimeJobs)).state.messages === 0 ? true : undefined),
      2_000,
      'the ack',
    );
    expect(deliveries).toEqual([1, 2]);
    expect((await consumerState(bus)).num_ack_pending).toBe(0);
  });

  it('a handler failing because a dependency is away is handled again within the same delivery, which counts nothing towards the bound', async () => {
    const bus = await jobsBus(uniquePrefix('outage'));
    const seen: number[] = [];
    await track(
      startWorkConsumer(bus, { ...jobsConsumerOpts(bus), maxDeliveries: 1, outageBudgetMs: 30_000 }, async (msg) => {
        seen.push(msg.info.deliveryCount);
        // Three times nobody answers (a service restarting), then it is back.
        if (seen.length <= 3) throw new RemoteError(wireError('no_responders', 'no memory replica is listening'), 'hermes.memory.session.lock');
      }),
    );

    await bus.publish(contracts.runtimeJobs, runtimeJob('j-outage'));

    await eventually(
      async () => ((await natsHandles(bus).jsm.streams.info(bus.subjects.streams.runtimeJobs)).state.messages === 0 ? true : undefined),
      15_000,
      'the ack',
    );
    expect(seen).toEqual([1, 1, 1, 1]);
    expect(await storedDeadLetters(bus)).toEqual([]);
  });

  it('runs at most `concurrency` handlers at once', async () => {
    const bus = await jobsBus(uniquePrefix('conc'));
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    await track(
      startWorkConsumer(bus, { ...jobsConsumerOpts(bus), concurrency: 2 }, async () => {
        maxRunning = Math.max(maxRunning, ++running);
        await sleep(60);
        running--;
        done++;
      }),
    );

    for (let i = 0; i < 6; i++) await bus.publish(contracts.runtimeJobs, runtimeJob(`j${i}`));

    await eventually(() => (done === 6 ? true : undefined), 5_000, 'all six jobs');
    expect(maxRunning).toBe(2);
  });

  it('a busy consumer takes no more jobs than it has slots, so waiting jobs are neither run twice nor hoarded', async () => {
    const prefix = uniquePrefix('slots');
    const first = await jobsBus(prefix, 500);
    const second = await jobsBus(prefix, 500);
    const runs: { replica: string; job: string; delivery: number }[] = [];
    const slowHandler = (replica: string) => async (msg: { data: Uint8Array; info: { deliveryCount: number } }) => {
      runs.push({ replica, job: (JSON.parse(new TextDecoder().decode(msg.data)) as RuntimeJob).job_id, delivery: msg.info.deliveryCount });
      await sleep(900);
    };
    await track(startWorkConsumer(first, { ...jobsConsumerOpts(first), concurrency: 1, heartbeatMs: 100 }, slowHandler('first')));
    for (let i = 0; i < 3; i++) await first.publish(contracts.runtimeJobs, runtimeJob(`j${i}`));
    await sleep(200);
    await track(startWorkConsumer(second, { ...jobsConsumerOpts(second), concurrency: 1, heartbeatMs: 100 }, slowHandler('second')));

    await eventually(() => (runs.length >= 3 ? true : undefined), 5_000, 'three runs');
    await sleep(1_200); // past ack_wait again: a job held without a handler would come back now
    expect(runs.map((r) => r.job).sort()).toEqual(['j0', 'j1', 'j2']);
    expect(runs.every((r) => r.delivery === 1)).toBe(true);
    expect(runs.filter((r) => r.replica === 'second').length).toBeGreaterThan(0);
  });

  it('a handler slower than ack_wait that sends heartbeats is not redelivered', async () => {
    const bus = await jobsBus(uniquePrefix('hb'), 500);
    const deliveries: number[] = [];
    let finished = false;
    await track(
      startWorkConsumer(bus, { ...jobsConsumerOpts(bus), heartbeatMs: 100 }, async (msg) => {
        deliveries.push(msg.info.deliveryCount);
        await sleep(1_300);
        finished = true;
      }),
    );

    await bus.publish(contracts.runtimeJobs, runtimeJob('slow'));

    await eventually(() => (finished ? true : undefined), 5_000, 'the slow handler');
    await eventually(async () => ((await consumerState(bus)).num_ack_pending === 0 ? true : undefined), 2_000, 'the ack');
    expect(deliveries).toEqual([1]);
    expect((await consumerState(bus)).num_redelivered).toBe(0);
  });

  it('without heartbeats the same slow handler gets its message redelivered after ack_wait', async () => {
    const bus = await jobsBus(uniquePrefix('nohb'), 300);
    const deliveries: number[] = [];
    const consumer = await track(
      startWorkConsumer(bus, { ...jobsConsumerOpts(bus), heartbeatMs: 60_000 }, async (msg) => {
        deliveries.push(msg.info.deliveryCount);
        await sleep(800);
      }),
    );

    await bus.publish(contracts.runtimeJobs, runtimeJob('slow'));

    await eventually(() => (deliveries.length >= 2 ? true : undefined), 5_000, 'the redelivery');
    expect(deliveries.slice(0, 2)).toEqual([1, 2]);
    await consumer.stop(2_000);
  });

  it('stop() hands a still-running message back at once, so another consumer takes it before ack_wait', async () => {
    const prefix = uniquePrefix('stop');
    const first = await jobsBus(prefix, 30_000);
    const second = await jobsBus(prefix, 30_000);
    let taken!: () => void;
    const tookIt = new Promise<void>((r) => (taken = r));
    const stopping = await startWorkConsumer(first, jobsConsumerOpts(first), async () => {
      taken();
      await new Promise(() => {});
    });
    await first.publish(contracts.runtimeJobs, runtimeJob('handover'));
    await tookIt;

    await stopping.stop(100);
    const deliveries: number[] = [];
    await track(
      startWorkConsumer(second, jobsConsumerOpts(second), async (msg) => {
        deliveries.push(msg.info.deliveryCount);
      }),
    );

    const handedBackAt = Date.now();
    await eventually(() => (deliveries.length > 0 ? true : undefined), 5_000, 'the handed-back message');
    expect(deliveries).toHaveLength(1);
    expect(Date.now() - handedBackAt).toBeLessThan(5_000); // ack_wait is 30 s
  });

  it('a connection closed under a running handler neither crashes the process nor loses the message', async () => {
    const prefix = uniquePrefix('closed');
    const survivor = await jobsBus(prefix, 400);
    const doomed = await jobsBus(prefix, 400);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let taken!: () => void;
    const tookIt = new Promise<void>((r) => (taken = r));
    await startWorkConsumer(doomed, { ...jobsConsumerOpts(doomed), heartbeatMs: 50 }, async () => {
      taken();
      await held;
    });
    await survivor.publish(contracts.runtimeJobs, runtimeJob('orphan'));
    await tookIt;

    await natsHandles(doomed).nc.close();
    await sleep(200); // several heartbeats fall due on the closed connection
    release(); // and the handler then finishes: its ack cannot be sent either
    await sleep(50);

    const deliveries: number[] = [];
    await track(startWorkConsumer(survivor, jobsConsumerOpts(survivor), async (msg) => void deliveries.push(msg.info.deliveryCount)));
    await eventually(() => (deliveries.length > 0 ? true : undefined), 5_000, 'the redelivery');
    expect(deliveries).toEqual([2]);
  });

  it('a job held by a process that is killed is redelivered to another consumer after ack_wait, not before', async () => {
    const prefix = uniquePrefix('killed');
    const ackWaitMs = 500;
    const bus = await jobsBus(prefix, ackWaitMs);
    const child = await startChildService({
      name: 'stuck-consumer',
      entry: fixture('stuck-consumer.mjs'),
      env: { NATS_URL: file.nats.url, PREFIX: prefix, ACK_WAIT_MS: String(ackWaitMs), HEARTBEAT_MS: '100' },
    });
    await child.waitForLog(/^consuming$/);
    await bus.publish(contracts.runtimeJobs, runtimeJob('held'));
    await child.waitForLog(/^took 1 delivery 1$/);

    const deliveries: { seq: number; count: number; at: number }[] = [];
    await track(
      startWorkConsumer(bus, jobsConsumerOpts(bus), async (msg) => void deliveries.push({ seq: msg.seq, count: msg.info.deliveryCount, at: Date.now() })),
    );
    await sleep(ackWaitMs * 2); // the live child keeps the job through heartbeats
    expect(deliveries).toEqual([]);

    const killedAt = Date.now();
    await child.kill();
    const [redelivered] = await eventually(() => (deliveries.length > 0 ? deliveries : undefined), 5_000, 'the redelivery');
    expect(redelivered).toMatchObject({ seq: 1, count: 2 });
    expect(redelivered!.at - killedAt).toBeLessThan(ackWaitMs + 2_000);
  });
});

describe('consumeContract', () => {
  it('an invalid payload is dead-lettered and reported, never handled or redelivered', async () => {
    const bus = await jobsBus(uniquePrefix('inv'), 300);
    const handled: RuntimeJob[] = [];
    const invalid: { subject: string; issues: { path: string }[] }[] = [];
    await track(
      consumeContract(
        bus,
        contracts.runtimeJobs,
        { ...jobsConsumerOpts(bus), retryDelayMs: 10, onInvalid: async (msg, issues) => void invalid.push({ subject: msg.subject, issues }) },
        async (job) => void handled.push(job),
      ),
    );

    await natsHandles(bus).js.publish(bus.subjects.runtimeJobs, encodeJson({ ...runtimeJob('bad'), model_role: 'oracle', extra: 1 }));
    await natsHandles(bus).js.publish(bus.subjects.runtimeJobs, new TextEncoder().encode('not json'));
    await bus.publish(contracts.runtimeJobs, runtimeJob('good'));

    await eventually(() => (handled.length === 1 && invalid.length === 2 ? true : undefined), 5_000, 'all three messages');
    await sleep(500); // past ack_wait and the retry delay: nothing may come back
    expect(handled.map((j) => j.job_id)).toEqual(['good']);
    expect(invalid).toHaveLength(2);
    expect(invalid[0]!.subject).toBe(bus.subjects.runtimeJobs);
    expect(invalid[0]!.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/model_role', '/extra']));
    expect(invalid[1]!.issues).toEqual([expect.objectContaining({ path: '', message: expect.stringContaining('not valid JSON') })]);
    const state = await consumerState(bus);
    expect(state.num_ack_pending).toBe(0);
    expect(state.num_redelivered).toBe(0);
    const records = await storedDeadLetters(bus);
    expect(records.map((r) => [r.stream_seq, r.deliveries, r.error.code, r.error.retryable])).toEqual([
      [1, 1, 'invalid_payload', false],
      [2, 1, 'invalid_payload', false],
    ]);
    expect((records[0]!.error.details?.issues as { path: string }[]).map((i) => i.path)).toEqual(expect.arrayContaining(['/model_role', '/extra']));
    expect(Buffer.from(records[1]!.payload!, 'base64').toString('utf8')).toBe('not json');
  });
});

describe('across a server restart', () => {
  it('a running work consumer keeps taking jobs once NATS is back', async () => {
    const bus = await jobsBus(uniquePrefix('restart'));
    const handled: string[] = [];
    await track(consumeContract(bus, contracts.runtimeJobs, jobsConsumerOpts(bus), async (job) => void handled.push(job.job_id)));
    await bus.publish(contracts.runtimeJobs, runtimeJob('before'));
    await eventually(() => (handled.length === 1 ? true : undefined), 5_000, 'the first job');

    const reconnected = (async () => {
      for await (const status of natsHandles(bus).nc.status()) if (status.type === 'reconnect') return;
    })();
    await file.nats.restart();
    await reconnected;
    await bus.publish(contracts.runtimeJobs, runtimeJob('after'));

    await eventually(() => (handled.length === 2 ? true : undefined), 10_000, 'the job published after the restart');
    expect(handled).toEqual(['before', 'after']);
  });
});
