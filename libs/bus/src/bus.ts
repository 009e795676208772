import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager, type PubAck, type StoredMsg } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import {
  defaultEventSourceBase,
  eventSourceFor,
  injectTraceContext,
  limitsError,
  subjectsFor,
  validate,
  type MessageContract,
  type Subjects,
} from '@hermes/contracts';
import type { Static, TSchema } from '@sinclair/typebox';
import { SpanKind } from '@opentelemetry/api';
import { inSpan, type Logger } from '@hermes/telemetry';
import { encodeJson } from './codec.js';
import { OutgoingPayloadError, PayloadLimitError } from './bus-errors.js';
import { bucketConfig, consumerConfig, streamConfig, type BucketKey, type ConsumerKey, type StreamKey, type StreamTuning } from './stream-specs.js';
import { contractSubject } from './contract-subject.js';
import { ConsumerProgress } from './consumer-progress.js';

export interface BusOptions {
  servers: string;
  /** Connection name shown in NATS monitoring: use the service name. */
  name: string;
  logger: Logger;
  prefix?: string;
  /**
   * Absolute URI naming this deployment in the `source` of the CloudEvents its services emit
   * (HERMES_EVENT_SOURCE); default `urn:hermes:<prefix>`.
   */
  eventSource?: string;
  user?: string;
  password?: string;
  token?: string;
  credsFile?: string;
  tuning?: StreamTuning;
  /** Prefix of this connection's reply inboxes (default `_INBOX`); least-privilege users get one of their own. */
  inboxPrefix?: string;
  /**
   * Keep retrying the first connection (default true: services wait for NATS, readiness stays
   * false meanwhile). Interactive tools set false to fail fast with a clear error.
   */
  waitOnFirstConnect?: boolean;
  /**
   * Liveness: a work consumer holding a message for this many of its ack_waits with nothing
   * settled meanwhile is stalled (HERMES_LIVENESS_ACK_WAITS, default 3).
   */
  livenessAckWaits?: number;
}

export interface PublishOptions {
  /** Overrides the contract's subject (for parameterised subjects such as a task's events). */
  subject?: string;
  /** JetStream de-duplication id (Nats-Msg-Id). */
  msgId?: string;
  headers?: MsgHdrs;
  /**
   * Wrap the publish in a PRODUCER span (`publish <contract>`), so the consumer's span has a
   * visible parent: for messages that start work elsewhere (submissions, jobs, results), not
   * for every event, which would drown the trace.
   */
  span?: boolean;
  /**
   * For a contract with a stream: `false` publishes without waiting for JetStream's ack (a plain
   * publish the stream still captures, de-duplicated by `msgId`). For high-rate progress events
   * whose loss on a NATS failure is acceptable; never for work or results.
   */
  ack?: boolean;
}

/** The raw NATS handles under a Bus. */
export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** The raw handles of `bus`, for `@hermes/bus/internal` only. */
export function natsHandles(bus: Bus): NatsHandles {
  // Element access reaches the private fields: this module owns them.
  return { nc: bus['nc'], js: bus['js'], jsm: bus['jsm'] };
}

/** One NATS connection with the JetStream handles and the subject catalogue a service needs. */
export class Bus {
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;

  private constructor(
    raw: NatsHandles,
    readonly subjects: Subjects,
    readonly logger: Logger,
    readonly tuning: StreamTuning,
    /** The work consumers running on this connection: what they hold, whether they progress. */
    readonly progress: ConsumerProgress,
    private readonly eventSourceBase: string,
  ) {
    // Kept off the public surface: callers use the typed methods; `@hermes/bus/internal` hands them out where a raw handle is truly needed.
    ({ nc: this.nc, js: this.js, jsm: this.jsm } = raw);
  }

  /** Connects with unlimited reconnects and logs every connection state change. */
  static async connect(opts: BusOptions): Promise<Bus> {
    const subjects = subjectsFor(opts.prefix);
    opts.logger.info({ servers: opts.servers }, 'connecting to NATS');
    const nc = await connect({
      // Keep trying when NATS is not up yet (pod start order); readiness stays false meanwhile.
      waitOnFirstConnect: opts.waitOnFirstConnect ?? true,
      servers: opts.servers.split(',').map((s) => s.trim()),
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // Without this the client builds two Error objects (stack traces) for every request, JetStream
      // publish and KV operation, in case it fails: about a millisecond of CPU per agent step.
      // Failures still throw the same error classes, only without the caller's async stack.
      noAsyncTraces: true,
      ...(opts.user ? { user: opts.user, pass: opts.password } : {}),
      ...(opts.token ? { token: opts.token } : {}),
      ...(opts.credsFile ? { authenticator: credsAuthenticator(readFileSync(opts.credsFile)) } : {}),
      ...(opts.inboxPrefix ? { inboxPrefix: opts.inboxPrefix } : {}),
    });
    opts.logger.info({ server: nc.getServer() }, 'connected to NATS');
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'ping' || s.type === 'staleConnection') continue;
        const level = s.type === 'disconnect' || s.type === 'error' ? 'warn' : 'info';
        // An error's message names e.g. the subject a permission violation refused (least-privilege users).
        const detail = 'server' in s ? s.server : s.type === 'error' ? s.error.message : undefined;
        opts.logger[level]({ nats_status: s.type, detail }, s.type === 'error' ? `NATS error: ${s.error.message}` : `NATS ${s.type}`);
      }
    })();
    const jsm = await jetstreamManager(nc);
    return new Bus(
      { nc, js: jetstream(nc), jsm },
      subjects,
      opts.logger,
      opts.tuning ?? {},
      new ConsumerProgress(opts.livenessAckWaits),
      opts.eventSource ?? defaultEventSourceBase(subjects.prefix),
    );
  }

  /** The CloudEvents `source` of events `service` emits on this deployment (`<base>/<service>`). */
  eventSource(service: string): string {
    return eventSourceFor(this.eventSourceBase, service);
  }

  /**
   * Declares streams idempotently: identical config is a no-op, a changed one is updated. With
   * `createOnly`, an existing stream is left as its owner configured it.
   */
  async ensureStreams(keys: StreamKey[], opts: { createOnly?: boolean; tuning?: StreamTuning } = {}): Promise<void> {
    const tuning = { ...this.tuning, ...opts.tuning };
    for (const key of keys) {
      const cfg = streamConfig(this.subjects, key, tuning);
      if (
        opts.createOnly &&
        (await this.jsm.streams.info(cfg.name).then(
          () => true,
          () => false,
        ))
      )
        continue;
      // add() with an identical config succeeds; a changed config (e.g. a new subject) fails
      // with "name already in use", and is then applied with update().
      try {
        await this.jsm.streams.add(cfg);
      } catch (err) {
        if (!(err instanceof JetStreamApiError)) throw err;
        await this.jsm.streams.update(cfg.name, await this.keepingConsumerLimit(cfg));
      }
    }
  }

  /**
   * nats-server 2.9 refuses to change a stream's max_consumers: a stream created before the limit
   * existed keeps its own (a warning at each declaration), so the update of its other settings still works.
   */
  private async keepingConsumerLimit<C extends { name: string; max_consumers?: number }>(cfg: C): Promise<C> {
    const current = (await this.jsm.streams.info(cfg.name)).config.max_consumers;
    if (cfg.max_consumers === undefined || current === cfg.max_consumers) return cfg;
    this.logger.warn(
      { stream: cfg.name, max_consumers: current, wanted: cfg.max_consumers },
      'stream keeps the consumer limit it was created with (nats-server cannot change it); recreate it to apply the new one',
    );
    return { ...cfg, max_consumers: current };
  }

  /** Declares durable consumers idempotently (several replicas may race; all succeed). */
  async ensureConsumers(keys: ConsumerKey[]): Promise<void> {
    for (const key of keys) {
      const { stream, config } = consumerConfig(this.subjects, key, this.tuning);
      try {
        await this.jsm.consumers.add(stream, config);
      } catch (err) {
        if (!(err instanceof JetStreamApiError)) throw err;
        await this.jsm.consumers.update(stream, config.durable_name, config);
      }
    }
  }

  /**
   * Opens (creating when absent) a bucket of the catalog with its config from `bucketConfig`;
   * `tuning` overrides this connection's for settings of the bucket's owner (the cache TTL).
   */
  async kv(key: BucketKey, opts: { tuning?: StreamTuning } = {}): Promise<KV> {
    const { name, ...config } = bucketConfig(this.subjects, key, { ...this.tuning, ...opts.tuning });
    const create = () => new Kvm(this.js).create(name, config);
    let kv: KV;
    try {
      kv = await create();
    } catch (err) {
      // Replicas starting together race to create the bucket's stream; the loser's create fails
      // ("subjects overlap", "already in use") although the bucket now exists: open it again.
      if (!/overlap|already in use/i.test(String((err as Error)?.message))) throw err;
      kv = await create();
    }
    await this.growReplicas(`KV_${name}`, config.replicas);
    return kv;
  }

  /**
   * Raises a stream's replicas in place when HERMES_JS_REPLICAS grew (an R1 deployment moving to a
   * cluster): a stream update keeps every message, where re-creating the stream would lose them.
   * Opening a bucket leaves an existing bucket's config as it is, so buckets need this; it is never
   * lowered here (shrinking is an operator's decision: `nats stream edit --replicas`).
   */
  private async growReplicas(stream: string, replicas: number): Promise<void> {
    if (replicas <= 1) return;
    const info = await this.jsm.streams.info(stream);
    if ((info.config.num_replicas ?? 1) >= replicas) return;
    await this.jsm.streams.update(stream, { ...info.config, num_replicas: replicas });
    this.logger.info({ stream, replicas }, 'stream replicas raised');
  }

  /**
   * Checks the payload against its contract's limits and schema, adds trace context and publishes:
   * to JetStream (awaiting the ack) when the contract has a stream, else as a core message.
   */
  async publish<P extends TSchema>(contract: MessageContract<P>, payload: Static<P>, opts: PublishOptions = {}): Promise<PubAck | undefined> {
    // Before the schema: what the consumer would refuse must not leave, and nothing recursive runs on it first.
    const overLimit = contract.limits ? limitsError(payload, contract.limits, { what: contract.name }) : undefined;
    if (overLimit) throw new PayloadLimitError(contract.name, overLimit);
    const checked = validate(contract.payload, payload);
    if (!checked.ok) throw new OutgoingPayloadError(contract.name, checked.issues);
    const subject = contractSubject(contract, this.subjects, opts.subject);
    if (!opts.span) return this.send(contract, subject, payload, opts);
    const attributes = {
      'messaging.system': 'nats',
      'messaging.destination.name': subject,
      'messaging.operation.type': 'send',
      ...(opts.msgId ? { 'messaging.message.id': opts.msgId } : {}),
    };
    return inSpan(`publish ${contract.name}`, { kind: SpanKind.PRODUCER, attributes }, () => this.send(contract, subject, payload, opts));
  }

  private async send<P extends TSchema>(contract: MessageContract<P>, subject: string, payload: Static<P>, opts: PublishOptions): Promise<PubAck | undefined> {
    const h = opts.headers ?? natsHeaders();
    injectTraceContext(h);
    if (contract.stream && opts.ack !== false) {
      return this.js.publish(subject, encodeJson(payload), { headers: h, ...(opts.msgId ? { msgID: opts.msgId } : {}) });
    }
    if (opts.msgId) h.set('Nats-Msg-Id', opts.msgId);
    this.nc.publish(subject, encodeJson(payload), { headers: h });
    return undefined;
  }

  /** Flushes and closes the connection, letting subscriptions finish what they hold. */
  /** Calls `onMessage` for each core message on `subject` (wildcards allowed) until unsubscribed; errors are logged. */
  subscribe(subject: string, onMessage: (msg: Msg) => void): Subscription {
    return this.nc.subscribe(subject, {
      callback: (err, msg) => (err ? this.logger.error({ err, subject }, 'subscription failed') : onMessage(msg)),
    });
  }

  /** Resolves once the server has processed everything sent so far (subscriptions included). */
  flush(): Promise<void> {
    return this.nc.flush();
  }

  /** The largest message the server takes, in bytes (undefined before the first connect). */
  get maxPayload(): number | undefined {
    return this.nc.info?.max_payload;
  }

  /** One stored message of a stream, by sequence or as the last on a subject; null when there is none. */
  storedMessage(stream: string, query: { seq: number } | { last_by_subj: string }): Promise<StoredMsg | null> {
    return this.jsm.streams.getMessage(stream, query);
  }

  async drain(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.drain();
  }
}
