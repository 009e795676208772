import { describe, expect, it } from 'vitest';
import type { JsMsg } from '@nats-io/jetstream';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { deadLetter, startWorkConsumer, type Bus, type RawHandler, type WorkConsumer, type WorkConsumerOptions } from '@hermes/bus';
import { contracts, wireError, type WireError } from '@hermes/contracts';
import { connectBus, storedDeadLetters as deadLetters, eventually, runtimeJob, natsForFile, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

const file = natsForFile();
const { buses, consumers } = file;

/** A bus whose runtimeJobs stream exists, with a durable of its own (`max_ack_pending` as given). */
async function jobsBus(label: string, maxAckPending = 1000): Promise<{ bus: Bus; durable: string }> {
  const bus = await connectBus(file.nats.url, { prefix: uniquePrefix(label) });
  buses.push(bus);
  await bus.ensureStreams(['runtimeJobs']);
  const durable = 'dl-test';
  await natsHandles(bus).jsm.consumers.add(bus.subjects.streams.runtimeJobs, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(30_000),
    max_ack_pending: maxAckPending,
    max_deliver: 20,
  });
  return { bus, durable };
}

async function track(c: Promise<WorkConsumer>): Promise<WorkConsumer> {
  const consumer = await c;
  consumers.push(consumer);
  return consumer;
}

const jobOf = (msg: JsMsg) => JSON.parse(new TextDecoder().decode(msg.data)) as { job_id: string };
/** A work consumer on the test durable recording the delivery count of each run and each error its hook gets. */
async function recordingConsumer(bus: Bus, durable: string, opts: Partial<WorkConsumerOptions>, handler: RawHandler = async () => {}) {
  const calls: number[] = [];
  const hooked: WireError[] = [];
  const onDeadLetter = (_msg: JsMsg, error: WireError) => void hooked.push(error);
  await track(
    startWorkConsumer(bus, { stream: bus.subjects.streams.runtimeJobs, durable, onDeadLetter, ...opts }, async (msg) => {
      calls.push(msg.info.deliveryCount);
      await handler(msg);
    }),
  );
  return { calls, hooked };
}

/** The dead letters once there are `n` of them. */
const deadLettersOnce = (bus: Bus, n: number) =>
  eventually(
    async () => {
      const records = await deadLetters(bus);
      return records.length === n ? records : undefined;
    },
    10_000,
    `${n} dead letter(s)`,
  );
const storedMessages = async (bus: Bus) => (await natsHandles(bus).jsm.streams.info(bus.subjects.streams.runtimeJobs)).state.messages;

describe('dead letters', () => {
  it('50 messages whose handler always throws are dead-lettered after the bound, and a good one behind them is handled', async () => {
    // Five ack-pending slots: without a bound, the first five poison messages would hold them for ever.
    const { bus, durable } = await jobsBus('poison', 5);
    const handled: string[] = [];
    const hooked: { seq: number; error: WireError }[] = [];
    await track(
      startWorkConsumer(
        bus,
        {
          stream: bus.subjects.streams.runtimeJobs,
          durable,
          maxDeliveries: 3,
          retryDelayMs: 10,
          onDeadLetter: (msg, error) => void hooked.push({ seq: msg.seq, error }),
        },
        async (msg) => {
          const { job_id } = jobOf(msg);
          if (job_id.startsWith('poison')) throw new Error(`cannot do ${job_id}`);
          handled.push(job_id);
        },
      ),
    );

    for (let i = 0; i < 50; i++) await bus.publish(contracts.runtimeJobs, runtimeJob(`poison-${i}`), { msgId: `poison-${i}` });
    await bus.publish(contracts.runtimeJobs, runtimeJob('good'), { msgId: 'good' });

    // 150 deliveries 10 ms apart; generous for a loaded machine.
    await eventually(() => (handled.length === 1 && hooked.length === 50 ? true : undefined), 60_000, 'the good job and 50 dead letters');
    expect(handled).toEqual(['good']);
    const records = await deadLetters(bus);
    expect(records).toHaveLength(50);
    expect(records.map((r) => r.stream_seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const first = records.find((r) => r.stream_seq === 1)!;
    expect(first).toMatchObject({
      stream: bus.subjects.streams.runtimeJobs,
      consumer: durable,
      subject: bus.subjects.runtimeJobs,
      deliveries: 3,
      error: { code: 'internal', message: 'cannot do poison-0', retryable: true, details: { error_name: 'Error' } },
      headers: expect.objectContaining({ 'Nats-Msg-Id': ['poison-0'] }),
    });
    expect(JSON.parse(Buffer.from(first.payload!, 'base64').toString('utf8'))).toEqual(runtimeJob('poison-0'));
    expect(first.payload_bytes).toBe(Buffer.from(first.payload!, 'base64').length);
    expect(hooked.find((h) => h.seq === 1)?.error).toEqual(first.error);
    // Terminated, so gone from the work queue and from the consumer's pending acks.
    await eventually(async () => ((await storedMessages(bus)) === 0 ? true : undefined), 10_000, 'the work queue to empty');
    expect((await natsHandles(bus).jsm.consumers.info(bus.subjects.streams.runtimeJobs, durable)).num_ack_pending).toBe(0);
  });

  it('a non-retryable error is dead-lettered on its first delivery, with its code', async () => {
    const { bus, durable } = await jobsBus('fatal');
    const calls: string[] = [];
    await track(
      startWorkConsumer(bus, { stream: bus.subjects.streams.runtimeJobs, durable, maxDeliveries: 5, retryDelayMs: 10 }, async (msg) => {
        const { job_id } = jobOf(msg);
        calls.push(job_id);
        if (job_id === 'typeerror') throw new TypeError('x is not a function');
        throw Object.assign(new Error('the session belongs to another user'), { code: 'session_forbidden', retryable: false });
      }),
    );

    await bus.publish(contracts.runtimeJobs, runtimeJob('typeerror'));
    await bus.publish(contracts.runtimeJobs, runtimeJob('refused'));

    const records = await deadLettersOnce(bus, 2);
    expect(calls.sort()).toEqual(['refused', 'typeerror']);
    expect(records.find((r) => r.stream_seq === 1)).toMatchObject({
      deliveries: 1,
      error: { code: 'internal', message: 'x is not a function', retryable: false, details: { error_name: 'TypeError' } },
    });
    expect(records.find((r) => r.stream_seq === 2)).toMatchObject({ deliveries: 1, error: { code: 'session_forbidden', retryable: false } });
  });

  it('a delivery already past the bound (its handler crashed the process every time) is dead-lettered without running the handler', async () => {
    const { bus, durable } = await jobsBus('crashed');
    await bus.publish(contracts.runtimeJobs, runtimeJob('crasher'), { msgId: 'crasher' });
    // Three deliveries nobody finished, as three processes that died holding it would leave.
    const raw = await natsHandles(bus).js.consumers.get(bus.subjects.streams.runtimeJobs, durable);
    for (let delivery = 1; delivery <= 3; delivery++) {
      const msg = await raw.next({ expires: 5_000 });
      expect(msg?.info.deliveryCount).toBe(delivery);
      msg!.nak();
    }

    const { calls, hooked } = await recordingConsumer(bus, durable, { maxDeliveries: 3 });

    const [record] = await deadLettersOnce(bus, 1);
    expect(record).toMatchObject({
      stream_seq: 1,
      deliveries: 4,
      error: { code: 'max_deliveries_exceeded', retryable: false, details: { max_deliveries: 3 } },
    });
    expect(hooked.map((e) => e.code)).toEqual(['max_deliveries_exceeded']);
    expect(calls).toEqual([]);
    await eventually(async () => ((await storedMessages(bus)) === 0 ? true : undefined), 10_000, 'the work queue to empty');
  });

  it('a handler can dead-letter a message itself; it is then neither redelivered nor reported to the hook', async () => {
    const { bus, durable } = await jobsBus('explicit');
    const { calls, hooked } = await recordingConsumer(bus, durable, { retryDelayMs: 10 }, (msg) =>
      deadLetter(bus, msg, wireError('duplicate', 'this submission was already received')).then(() => {}),
    );

    await bus.publish(contracts.runtimeJobs, runtimeJob('dup'));

    const [record] = await deadLettersOnce(bus, 1);
    expect(record).toMatchObject({ deliveries: 1, consumer: durable, error: { code: 'duplicate', retryable: false } });
    await eventually(async () => ((await storedMessages(bus)) === 0 ? true : undefined), 10_000, 'the work queue to empty');
    expect(calls).toEqual([1]);
    expect(hooked).toEqual([]);
  });

  it('a body too large to travel inside its record is left out of it, its size kept', async () => {
    const { bus, durable } = await jobsBus('huge');
    await recordingConsumer(bus, durable, {}, async () => {
      throw new TypeError('cannot handle it');
    });
    // 800 kB is 1.07 MB in base64: more than the server's default max_payload of 1 MB.
    await natsHandles(bus).js.publish(bus.subjects.runtimeJobs, new Uint8Array(800_000).fill(0x61));

    const [record] = await deadLettersOnce(bus, 1);
    expect(record).toMatchObject({ payload_bytes: 800_000, error: { code: 'internal' } });
    expect(record!.payload).toBeUndefined();
    await eventually(async () => ((await storedMessages(bus)) === 0 ? true : undefined), 10_000, 'the work queue to empty');
  });

  it('a hook that throws does not keep the message: it is dead-lettered all the same', async () => {
    const { bus, durable } = await jobsBus('hookfail');
    let hookCalls = 0;
    await track(
      startWorkConsumer(
        bus,
        {
          stream: bus.subjects.streams.runtimeJobs,
          durable,
          onDeadLetter: () => {
            hookCalls++;
            throw new Error('the hook is broken');
          },
        },
        async () => {
          throw new RangeError('Maximum call stack size exceeded');
        },
      ),
    );

    await bus.publish(contracts.runtimeJobs, runtimeJob('deep'));

    await eventually(async () => ((await storedMessages(bus)) === 0 ? true : undefined), 10_000, 'the work queue to empty');
    expect(hookCalls).toBe(1);
    expect((await deadLetters(bus)).map((r) => r.error.details?.error_name)).toEqual(['RangeError']);
  });
});
