import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { MICRO_TYPES, MICRO_VERBS, TOOL_SPEC_METADATA, microSubject, type MicroVerb, type ToolSpec } from '@hermes/contracts';
import type { ToolSdkLogger } from './sdk-logger.js';

/** The queue group every services API client uses by default (Go micro before 1.24 knows no other). */
export const MICRO_QUEUE = 'q';

/** One endpoint of the service: a tool, on its own subject. */
export interface MicroEndpoint {
  name: string;
  subject: string;
  spec: ToolSpec;
}

export interface MicroIdentity {
  name: string;
  id: string;
  version: string;
  description: string;
}

/** What `$SRV.STATS` counts per endpoint (processing time in nanoseconds, as ADR-32 says). */
interface Counters {
  num_requests: number;
  num_errors: number;
  processing_time: number;
}

/** The ADR-32 replies of a service with these endpoints: pure, so their shapes are tested without a server. */
export function microReplies(id: MicroIdentity, endpoints: readonly MicroEndpoint[], started: string, counters: ReadonlyMap<string, Counters>) {
  const identity = { name: id.name, id: id.id, version: id.version, metadata: {} };
  return {
    PING: () => ({ type: MICRO_TYPES.PING, ...identity }),
    INFO: () => ({
      type: MICRO_TYPES.INFO,
      ...identity,
      description: id.description,
      endpoints: endpoints.map((e) => ({
        name: e.name,
        subject: e.subject,
        queue_group: MICRO_QUEUE,
        metadata: { [TOOL_SPEC_METADATA]: JSON.stringify(e.spec) },
      })),
    }),
    STATS: () => ({
      type: MICRO_TYPES.STATS,
      ...identity,
      started,
      endpoints: endpoints.map((e) => {
        const c = counters.get(e.name) ?? { num_requests: 0, num_errors: 0, processing_time: 0 };
        const average = c.num_requests ? Math.round(c.processing_time / c.num_requests) : 0;
        return { name: e.name, subject: e.subject, queue_group: MICRO_QUEUE, ...c, average_processing_time: average, last_error: '' };
      }),
    }),
    SCHEMA: () => ({
      type: MICRO_TYPES.SCHEMA,
      ...identity,
      endpoints: endpoints.map((e) => ({
        name: e.name,
        subject: e.subject,
        queue_group: MICRO_QUEUE,
        schema: { request: JSON.stringify(e.spec.parameters), response: '' },
      })),
    }),
  } satisfies Record<MicroVerb, () => object>;
}

/**
 * Makes a provider a NATS micro service (hand-written: `@nats-io/services` is not a dependency the
 * SDK may bring): answers `$SRV.<verb>`, `$SRV.<verb>.<name>` and `$SRV.<verb>.<name>.<id>` for
 * PING, INFO, STATS and SCHEMA, and takes each tool's calls on its endpoint in queue group `q`.
 */
export class MicroResponder {
  private readonly subs: Subscription[] = [];
  private readonly counters = new Map<string, Counters>();

  constructor(
    private readonly o: {
      nc: NatsConnection;
      logger: ToolSdkLogger;
      identity: MicroIdentity;
      endpoints: readonly MicroEndpoint[];
      /** Runs one call; `done` says whether its reply was an error. */
      handle: (msg: Msg, done: (failed: boolean) => void) => void;
    },
  ) {}

  start(): void {
    const { nc, identity, endpoints } = this.o;
    const replies = microReplies(identity, endpoints, new Date().toISOString(), this.counters);
    for (const verb of MICRO_VERBS) {
      for (const subject of [microSubject(verb), microSubject(verb, identity.name), microSubject(verb, identity.name, identity.id)]) {
        this.subs.push(nc.subscribe(subject, { callback: (err, msg) => (err ? this.failed(subject, err) : this.reply(msg, replies[verb]())) }));
      }
    }
    for (const e of endpoints) {
      const c: Counters = { num_requests: 0, num_errors: 0, processing_time: 0 };
      this.counters.set(e.name, c);
      this.subs.push(
        nc.subscribe(e.subject, {
          queue: MICRO_QUEUE,
          callback: (err, msg) => {
            if (err) return this.failed(e.subject, err);
            const began = process.hrtime.bigint();
            this.o.handle(msg, (failed) => {
              c.num_requests += 1;
              if (failed) c.num_errors += 1;
              c.processing_time += Number(process.hrtime.bigint() - began);
            });
          },
        }),
      );
    }
  }

  /** Stops answering `$SRV` and lets calls already delivered to the endpoints through. */
  async stop(): Promise<void> {
    await Promise.all(this.subs.map((s) => s.drain().catch((err: unknown) => this.o.logger.warn({ err }, 'could not drain a micro service subscription'))));
  }

  private reply(msg: Msg, body: object): void {
    try {
      msg.respond(JSON.stringify(body));
    } catch (err) {
      this.o.logger.warn({ err, subject: msg.subject }, 'could not answer a services API request');
    }
  }

  private failed(subject: string, err: Error): void {
    this.o.logger.error({ err, subject }, 'micro service subscription failed');
  }
}
