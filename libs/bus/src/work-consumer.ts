import type { Consumer, ConsumerConfig, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { millis } from '@nats-io/transport-node';
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import { extractTraceContext, validate, type MessageContract, type WireError } from '@hermes/contracts';
import type { Static, TSchema } from '@sinclair/typebox';
import { hermesMeter, hermesTracer } from '@hermes/telemetry';
import type { Bus } from './bus.js';
import { InvalidMessageError } from './bus-errors.js';
import { decodeJson } from './codec.js';
import type { ConsumerTracker } from './consumer-progress.js';
import { deliveriesExhausted, errorAsWire, isRetryable, publishDeadLetter, terminateDeadLetter } from './dead-letter.js';
import { DEFAULT_MAX_DELIVERIES, DEFAULT_OUTAGE_BUDGET_MS } from './stream-specs.js';
import { retryThroughOutage } from './outage-retry.js';
import { natsHandles } from './bus.js';
import { LanePuller, PULL_RETRY_MS } from './lane-puller.js';

const PULL_EXPIRES_MS = 5_000;
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * Called after a message's dead-letter record is stored and before the message is terminated, so
 * the owning service can say what was dropped in its own terms (a failed result, a rejected
 * task). Errors it throws are logged and ignored: the message is terminated regardless.
 */
export type DeadLetterHook = (msg: JsMsg, error: WireError) => Promise<void> | void;

export interface WorkConsumerOptions {
  stream: string;
  durable: string;
  /**
   * A second durable whose messages take free slots before this one's (the runtime's ahead lane:
   * work of tasks already running goes before new tasks). See LanePuller.
   */
  ahead?: { stream: string; durable: string };
  /** Messages handled at once by this process. */
  concurrency?: number;
  /** How often to tell JetStream a long handler is still working (must be < ack_wait). */
  heartbeatMs?: number;
  /**
   * Delay before a message whose handler threw is redelivered; a function of the delivery count
   * (1 on the first attempt) gives back-off. Default: exponential from 1 s (capped at 30 s),
   * with jitter so messages that failed together do not all come back together.
   */
  retryDelayMs?: number | ((deliveryCount: number) => number);
  /**
   * Deliveries before a message whose handler keeps failing is dead-lettered (default: the
   * connection's `maxDeliveries` tuning, HERMES_MAX_DELIVERIES, else 5). A delivery arriving
   * past it is dead-lettered without running the handler.
   */
  maxDeliveries?: number;
  /**
   * How long a delivery whose handler failed because a dependency is away (isDependencyOutage:
   * nobody answering, no JetStream leader) is kept and handled again, with back-off, before the
   * failure counts as a delivery (default: the connection's `outageBudgetMs`, HERMES_OUTAGE_BUDGET_MS,
   * else 5 min). A restart or an election so costs time, not deliveries towards the dead-letter bound.
   */
  outageBudgetMs?: number;
  /** Reports each dead letter in the owning service's terms; see {@link DeadLetterHook}. */
  onDeadLetter?: DeadLetterHook;
  /**
   * Liveness: holding a message this long with nothing settled meanwhile marks the consumer
   * stalled (`/healthz` 503). Default: HERMES_LIVENESS_ACK_WAITS × the consumer's ack_wait.
   */
  stallAfterMs?: number;
}

export interface WorkConsumer {
  /** Stops pulling; waits for in-flight handlers, naks those still running after `timeoutMs`. */
  stop(timeoutMs: number): Promise<void>;
  readonly inFlight: number;
}

/**
 * Handles raw JetStream messages; resolve to ack, throw to have the message redelivered. Resolve
 * to `leave` when another consumer process holds the message now (its delivery replaced this
 * one): this delivery then neither acks nor naks, and the message's fate is the holder's.
 */
export type RawHandler = (msg: JsMsg) => Promise<void | HandlerOutcome>;

/** How a handled delivery ends: `done` (or nothing) acks it; `leave`, see RawHandler. */
export type HandlerOutcome = 'done' | 'leave';

/**
 * Runs a durable pull consumer with explicit acks. A handler that throws a retryable error gets
 * its message nak'ed (redelivered after a back-off); a process that dies leaves it unacked, so
 * JetStream redelivers it once ack_wait passes. Long handlers send heartbeats (`working`)
 * meanwhile. After `maxDeliveries`, or at once on a non-retryable error, the message is
 * dead-lettered: its record goes to the dead-letter stream, `onDeadLetter` runs, and it is
 * terminated, so no message holds an ack-pending slot for ever.
 */
export async function startWorkConsumer(bus: Bus, opts: WorkConsumerOptions, handler: RawHandler): Promise<WorkConsumer> {
  const concurrency = opts.concurrency ?? 16;
  const maxDeliveries = opts.maxDeliveries ?? bus.tuning.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
  // A consumer that can dead-letter needs somewhere to put the records (the dispatcher owns the stream's config).
  await bus.ensureStreams(['deadLetters'], { createOnly: true });
  const consumer = await natsHandles(bus).js.consumers.get(opts.stream, opts.durable);
  const config = await checkedConfig(bus, consumer, opts.stream, opts.durable, maxDeliveries);
  const aheadConsumer = opts.ahead ? await natsHandles(bus).js.consumers.get(opts.ahead.stream, opts.ahead.durable) : undefined;
  if (aheadConsumer && opts.ahead) await checkedConfig(bus, aheadConsumer, opts.ahead.stream, opts.ahead.durable, maxDeliveries);
  const tracker = bus.progress.track({
    stream: opts.stream,
    consumer: opts.durable,
    ackWaitMs: config.ack_wait ? millis(config.ack_wait) : 30_000,
    ...(opts.stallAfterMs !== undefined ? { stallAfterMs: opts.stallAfterMs } : {}),
  });
  const settle = { bus, opts, tracker, maxDeliveries };
  // Created here, not at import: the meter must come from the provider telemetry start-up registered.
  const redeliveries = hermesMeter().createCounter('hermes.bus.redeliveries', {
    unit: '{message}',
    description: 'messages handled again after a failed or unfinished earlier delivery',
  });
  const attrs = { 'messaging.system': 'nats', 'messaging.destination.name': opts.stream, 'messaging.consumer.group.name': opts.durable };
  const running = new Set<{ msg: JsMsg; done: Promise<void> }>();
  let stopped = false;
  let batch: ConsumerMessages | undefined;
  let waiters: (() => void)[] = [];
  const closing = () => natsHandles(bus).nc.isClosed() || natsHandles(bus).nc.isDraining();
  const receive = (msg: JsMsg) => {
    if (msg.info.deliveryCount > 1) redeliveries.add(1, attrs);
    tracker.received(msg);
  };
  const start = (msg: JsMsg) => {
    const entry = { msg, done: Promise.resolve() };
    entry.done = handleOne(settle, handler, msg).finally(() => {
      running.delete(entry);
      wake();
    });
    running.add(entry);
  };
  const lanes = aheadConsumer
    ? new LanePuller(
        {
          concurrency,
          running: () => running.size,
          start,
          received: receive,
          done: () => stopped || closing(),
          heartbeatMs: opts.heartbeatMs ?? 5000,
          warn: (err, lane) => bus.logger.warn({ err, stream: opts.stream, durable: opts.durable, lane }, 'pull failed; retrying'),
        },
        { ahead: aheadConsumer, main: consumer, mainExpiresMs: PULL_EXPIRES_MS },
      )
    : undefined;
  const wake = () => {
    lanes?.pump();
    const w = waiters;
    waiters = [];
    w.forEach((f) => f());
  };

  // Pulls only as many messages as there are free slots. A message fetched ahead of a free
  // slot would sit unacked and without heartbeats, be redelivered after ack_wait and then run
  // twice (`consume()` keeps its buffer topped up regardless of how fast we handle messages).
  const loop = (async () => {
    if (lanes) return lanes.pump();
    while (!stopped) {
      while (!stopped && running.size >= concurrency) await new Promise<void>((r) => waiters.push(r));
      if (stopped || closing()) break;
      try {
        batch = await consumer.fetch({ max_messages: concurrency - running.size, expires: PULL_EXPIRES_MS });
        if (stopped) batch.stop();
        for await (const msg of batch) {
          receive(msg);
          start(msg);
        }
      } catch (err) {
        if (stopped || closing()) break;
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
      // Held messages go back at once, to a replica that can start them.
      for (const msg of (await lanes?.stop()) ?? []) tracker.released(msg);
      const all = Promise.all([...running].map((r) => r.done));
      const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), timeoutMs).unref())]);
      if (timedOut) {
        // Hand unfinished work back now rather than after ack_wait, so another replica takes it.
        for (const r of running) r.msg.nak();
      }
      bus.progress.untrack(tracker);
    },
  };
}

/** The consumer's config, warning when JetStream would stop delivering before the dead-letter bound. */
async function checkedConfig(bus: Bus, consumer: Consumer, stream: string, durable: string, maxDeliveries: number): Promise<ConsumerConfig> {
  const { config } = await consumer.info(true);
  if (config.max_deliver !== undefined && config.max_deliver > 0 && config.max_deliver <= maxDeliveries) {
    // Such messages would stay in the stream, never dead-lettered.
    bus.logger.warn(
      { stream, durable, max_deliver: config.max_deliver, max_deliveries: maxDeliveries },
      'consumer max_deliver is not above the dead-letter bound',
    );
  }
  return config;
}

interface Settling {
  bus: Bus;
  opts: WorkConsumerOptions;
  tracker: ConsumerTracker;
  maxDeliveries: number;
}

async function handleOne(o: Settling, handler: RawHandler, msg: JsMsg): Promise<void> {
  const { bus, opts } = o;
  const parent = extractTraceContext(msg.headers);
  const span = hermesTracer().startSpan(
    `process ${msg.subject}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'nats',
        'messaging.destination.name': msg.subject,
        'messaging.operation.type': 'process',
        'messaging.nats.delivery_count': msg.info.deliveryCount,
      },
    },
    parent,
  );
  const heartbeat = setInterval(() => msg.working(), opts.heartbeatMs ?? 5000);
  try {
    if (msg.info.deliveryCount > o.maxDeliveries) {
      // Its handler never finished the earlier deliveries (the process crashed or hung on it):
      // running it once more would likely do the same.
      await settleDead(o, msg, deliveriesExhausted(msg, o.maxDeliveries), span);
      return;
    }
    const outcome = await throughOutages(o, msg, () => context.with(trace.setSpan(parent, span), () => handler(msg)));
    if (outcome === 'leave') {
      // Another delivery holds it now: not progress of ours, and not ours to settle.
      o.tracker.released(msg);
      return;
    }
    msg.ack();
    o.tracker.settled(msg);
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    const retryable = isRetryable(err);
    if (!retryable || msg.info.deliveryCount >= o.maxDeliveries) {
      bus.logger.error({ err, subject: msg.subject, delivery: msg.info.deliveryCount, retryable }, 'handler failed; message will be dead-lettered');
      await settleDead(o, msg, errorAsWire(err), span);
      return;
    }
    bus.logger.error({ err, subject: msg.subject, delivery: msg.info.deliveryCount }, 'handler failed; message will be redelivered');
    retryLater(o, msg);
  } finally {
    clearInterval(heartbeat);
    span.end();
  }
}

/**
 * Records the message on the dead-letter stream, lets the service report it, and terminates it.
 * A record that cannot be stored leaves the message to come back (nak): the next delivery is past
 * the bound and tries again, until JetStream's max_deliver backstop.
 */
async function settleDead(o: Settling, msg: JsMsg, error: WireError, span: Span): Promise<void> {
  const { bus, opts } = o;
  span.setAttribute('hermes.dead_letter.code', error.code);
  try {
    await publishDeadLetter(bus, msg, error);
  } catch (err) {
    bus.logger.error({ err, subject: msg.subject, seq: msg.seq, code: error.code }, 'dead-letter record not stored; message will be redelivered');
    retryLater(o, msg);
    return;
  }
  try {
    await opts.onDeadLetter?.(msg, error);
  } catch (err) {
    bus.logger.error({ err, subject: msg.subject, seq: msg.seq }, 'onDeadLetter hook failed; the message is dead-lettered anyway');
  }
  terminateDeadLetter(msg, error);
  o.tracker.settled(msg);
  bus.logger.warn(
    { stream: msg.info.stream, consumer: msg.info.consumer, seq: msg.seq, subject: msg.subject, deliveries: msg.info.deliveryCount, code: error.code },
    'message dead-lettered',
  );
}

/** Runs the handler again, within this delivery, while it fails because a dependency is away (see outageBudgetMs). */
function throughOutages<T>(o: Settling, msg: JsMsg, run: () => Promise<T>): Promise<T> {
  return retryThroughOutage(run, {
    budgetMs: o.opts.outageBudgetMs ?? o.bus.tuning.outageBudgetMs ?? DEFAULT_OUTAGE_BUDGET_MS,
    logger: o.bus.logger,
    what: 'handling the message (delivery kept)',
    context: { subject: msg.subject, delivery: msg.info.deliveryCount },
  });
}

function retryLater(o: Settling, msg: JsMsg): void {
  const n = msg.info.deliveryCount;
  const delay = typeof o.opts.retryDelayMs === 'function' ? o.opts.retryDelayMs(n) : (o.opts.retryDelayMs ?? backoffWithJitter(n));
  msg.nak(delay);
  o.tracker.released(msg);
}

/** 1 s, 2 s, 4 s, … capped at 30 s, each between half and all of that (equal jitter). */
function backoffWithJitter(deliveryCount: number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, deliveryCount - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/**
 * A work consumer for a message contract: the payload is decoded and validated first. An invalid
 * message is dead-lettered at once (redelivery cannot fix it), after `onInvalid` has reported it.
 */
export async function consumeContract<P extends TSchema>(
  bus: Bus,
  contract: MessageContract<P>,
  opts: WorkConsumerOptions & { onInvalid?: (msg: JsMsg, issues: { path: string; message: string }[]) => Promise<void> },
  handler: (payload: Static<P>, msg: JsMsg) => Promise<void | HandlerOutcome>,
): Promise<WorkConsumer> {
  return startWorkConsumer(bus, opts, async (msg) => {
    const decoded = decodeJson(msg.data, contract.limits);
    const checked = decoded.ok ? validate(contract.payload, decoded.value) : undefined;
    if (!checked?.ok) {
      const issues = decoded.ok ? (checked?.issues ?? []) : [{ path: '', message: decoded.message }];
      bus.logger.warn({ subject: msg.subject, issues }, `invalid ${contract.name} message dropped`);
      await opts.onInvalid?.(msg, issues);
      throw new InvalidMessageError(contract.name, issues, decoded.ok ? undefined : decoded.error);
    }
    return handler(checked.value, msg);
  });
}
