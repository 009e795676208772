import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { validate, type MessageContract } from '@hermes/contracts';
import type { Static, TSchema } from '@sinclair/typebox';
import { hermesMeter, hermesTracer } from '@hermes/telemetry';
import type { Bus } from './bus.js';
import { decodeJson } from './codec.js';
import { extractTraceContext } from './trace-headers.js';

const PULL_EXPIRES_MS = 5_000;
const PULL_RETRY_MS = 500;

export interface WorkConsumerOptions {
  stream: string;
  durable: string;
  /** Messages handled at once by this process. */
  concurrency?: number;
  /** How often to tell JetStream a long handler is still working (must be < ack_wait). */
  heartbeatMs?: number;
  /**
   * Delay before a message whose handler threw is redelivered; a function of the delivery count
   * (1 on the first attempt) gives back-off.
   */
  retryDelayMs?: number | ((deliveryCount: number) => number);
}

export interface WorkConsumer {
  /** Stops pulling; waits for in-flight handlers, naks those still running after `timeoutMs`. */
  stop(timeoutMs: number): Promise<void>;
  readonly inFlight: number;
}

/** Handles raw JetStream messages; resolve to ack, throw to have the message redelivered. */
export type RawHandler = (msg: JsMsg) => Promise<void>;

/**
 * Runs a durable pull consumer with explicit acks. A handler that throws gets its message
 * nak'ed (redelivered after a delay); a process that dies leaves it unacked, so JetStream
 * redelivers it once ack_wait passes. Long handlers send heartbeats (`working`) meanwhile.
 */
export async function startWorkConsumer(bus: Bus, opts: WorkConsumerOptions, handler: RawHandler): Promise<WorkConsumer> {
  const concurrency = opts.concurrency ?? 16;
  const consumer = await bus.js.consumers.get(opts.stream, opts.durable);
  // Created here, not at import: the meter must come from the provider telemetry start-up registered.
  const redeliveries = hermesMeter().createCounter('hermes.bus.redeliveries', { unit: '{message}', description: 'messages handled again after a failed or unfinished earlier delivery' });
  const attrs = { 'messaging.system': 'nats', 'messaging.destination.name': opts.stream, 'messaging.consumer.group.name': opts.durable };
  const running = new Set<{ msg: JsMsg; done: Promise<void> }>();
  let stopped = false;
  let batch: ConsumerMessages | undefined;
  let waiters: (() => void)[] = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    w.forEach((f) => f());
  };

  // Pulls only as many messages as there are free slots. A message fetched ahead of a free
  // slot would sit unacked and without heartbeats, be redelivered after ack_wait and then run
  // twice (`consume()` keeps its buffer topped up regardless of how fast we handle messages).
  const loop = (async () => {
    while (!stopped) {
      while (!stopped && running.size >= concurrency) await new Promise<void>((r) => waiters.push(r));
      if (stopped || bus.nc.isClosed() || bus.nc.isDraining()) break;
      try {
        batch = await consumer.fetch({ max_messages: concurrency - running.size, expires: PULL_EXPIRES_MS });
        if (stopped) batch.stop();
        for await (const msg of batch) {
          const entry = { msg, done: Promise.resolve() };
          if (msg.info.deliveryCount > 1) redeliveries.add(1, attrs);
          entry.done = handleOne(bus, opts, handler, msg).finally(() => {
            running.delete(entry);
            wake();
          });
          running.add(entry);
        }
      } catch (err) {
        if (stopped || bus.nc.isClosed() || bus.nc.isDraining()) break;
        bus.logger.warn({ err, stream: opts.stream, durable: opts.durable }, 'pull failed; retrying');
        await new Promise((r) => setTimeout(r, PULL_RETRY_MS));
      } finally {
        batch = undefined;
      }
    }
  })();

  return {
    get inFlight() {
      return running.size;
    },
    async stop(timeoutMs: number) {
      stopped = true;
      batch?.stop();
      wake();
      await loop.catch(() => {});
      const all = Promise.all([...running].map((r) => r.done));
      const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), timeoutMs).unref())]);
      if (timedOut) {
        // Hand unfinished work back now rather than after ack_wait, so another replica takes it.
        for (const r of running) r.msg.nak();
      }
    },
  };
}

async function handleOne(bus: Bus, opts: WorkConsumerOptions, handler: RawHandler, msg: JsMsg): Promise<void> {
  const parent = extractTraceContext(msg.headers);
  const span = hermesTracer().startSpan(`process ${msg.subject}`, {
    kind: SpanKind.CONSUMER,
    attributes: {
      'messaging.system': 'nats',
      'messaging.destination.name': msg.subject,
      'messaging.operation.type': 'process',
      'messaging.nats.delivery_count': msg.info.deliveryCount,
    },
  }, parent);
  const heartbeat = setInterval(() => msg.working(), opts.heartbeatMs ?? 5000);
  try {
    await context.with(trace.setSpan(parent, span), () => handler(msg));
    msg.ack();
  } catch (err) {
    bus.logger.error({ err, subject: msg.subject, delivery: msg.info.deliveryCount }, 'handler failed; message will be redelivered');
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    const delay = typeof opts.retryDelayMs === 'function' ? opts.retryDelayMs(msg.info.deliveryCount) : opts.retryDelayMs;
    msg.nak(delay ?? 1000);
  } finally {
    clearInterval(heartbeat);
    span.end();
  }
}

/**
 * A work consumer for a message contract: the payload is decoded and validated first. An invalid
 * message is terminated (redelivery cannot fix it) and passed to `onInvalid` for reporting.
 */
export async function consumeContract<P extends TSchema>(
  bus: Bus,
  contract: MessageContract<P>,
  opts: WorkConsumerOptions & { onInvalid?: (msg: JsMsg, issues: { path: string; message: string }[]) => Promise<void> },
  handler: (payload: Static<P>, msg: JsMsg) => Promise<void>,
): Promise<WorkConsumer> {
  return startWorkConsumer(bus, opts, async (msg) => {
    const decoded = decodeJson(msg.data, contract.limits);
    const checked = decoded.ok ? validate(contract.payload, decoded.value) : undefined;
    if (!checked?.ok) {
      const issues = decoded.ok ? (checked?.issues ?? []) : [{ path: '', message: decoded.message }];
      bus.logger.warn({ subject: msg.subject, issues }, `invalid ${contract.name} message dropped`);
      await opts.onInvalid?.(msg, issues);
      // No reason text: nats-server 2.9 only understands a bare `+TERM` and ignores `+TERM <reason>`,
      // which would leave the message to be redelivered forever.
      msg.term();
      return;
    }
    await handler(checked.value, msg);
  });
}
