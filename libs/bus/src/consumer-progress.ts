import type { JsMsg } from '@nats-io/jetstream';
import { hermesMeter } from '@hermes/telemetry';

/** Default N of the liveness rule: stalled when nothing was settled for N × ack_wait (HERMES_LIVENESS_ACK_WAITS). */
export const DEFAULT_LIVENESS_ACK_WAITS = 3;

/** A consumer of this process holding work it makes no progress on. */
export interface StalledConsumer {
  stream: string;
  consumer: string;
  /** Messages it holds now. */
  in_flight: number;
  /** How long it has held the oldest of them. */
  oldest_unacked_age_ms: number;
  /** Since it last settled a message (ack or dead letter), or since it started when it never did. */
  since_last_ack_ms: number;
  /** The bound those two passed. */
  stall_after_ms: number;
}

/**
 * What one work consumer of this process is doing: the messages it holds (since when) and when it
 * last settled one. Progress is an ack or a dead letter; a nak is not (the message comes back).
 */
export class ConsumerTracker {
  private readonly held = new Map<JsMsg, number>();
  private lastSettledAt: number;

  constructor(
    readonly stream: string,
    readonly consumer: string,
    /** No settled message for this long while one has been held as long: stalled. */
    readonly stallAfterMs: number,
    private readonly now: () => number,
  ) {
    this.lastSettledAt = now();
  }

  received(msg: JsMsg): void {
    this.held.set(msg, this.now());
  }

  /** Acked or dead-lettered: the consumer moved on. */
  settled(msg: JsMsg): void {
    this.held.delete(msg);
    this.lastSettledAt = this.now();
  }

  /** Nak'ed or handed back: no longer held here, but not progress either. */
  released(msg: JsMsg): void {
    this.held.delete(msg);
  }

  get inFlight(): number {
    return this.held.size;
  }

  /** Age of the oldest message held now; 0 when none is. */
  oldestUnackedAgeMs(at = this.now()): number {
    let oldest = at;
    for (const since of this.held.values()) oldest = Math.min(oldest, since);
    return at - oldest;
  }

  /**
   * Stalled: it has held a message for longer than the bound and settled nothing within it. A
   * slow handler among others that finish is not (the others are progress); a consumer that only
   * just took work after a quiet hour is not (its oldest message is young).
   */
  stalled(at = this.now()): StalledConsumer | undefined {
    const oldest = this.oldestUnackedAgeMs(at);
    const sinceSettled = at - this.lastSettledAt;
    if (this.held.size === 0 || oldest < this.stallAfterMs || sinceSettled < this.stallAfterMs) return undefined;
    return {
      stream: this.stream,
      consumer: this.consumer,
      in_flight: this.held.size,
      oldest_unacked_age_ms: oldest,
      since_last_ack_ms: sinceSettled,
      stall_after_ms: this.stallAfterMs,
    };
  }
}

/**
 * The work consumers one connection runs, for the liveness probe and the oldest-unacked metric.
 * Every consumer registers itself when it starts and leaves when it stops.
 */
export class ConsumerProgress {
  private readonly trackers = new Set<ConsumerTracker>();
  private gauge = false;

  constructor(
    /** N of the stall rule: a consumer's bound is N × its ack_wait unless it sets its own. */
    readonly livenessAckWaits: number = DEFAULT_LIVENESS_ACK_WAITS,
    private readonly now: () => number = Date.now,
  ) {}

  track(o: { stream: string; consumer: string; ackWaitMs: number; stallAfterMs?: number }): ConsumerTracker {
    const tracker = new ConsumerTracker(o.stream, o.consumer, o.stallAfterMs ?? this.livenessAckWaits * o.ackWaitMs, this.now);
    this.trackers.add(tracker);
    this.observe();
    return tracker;
  }

  untrack(tracker: ConsumerTracker): void {
    this.trackers.delete(tracker);
  }

  /** The consumers stalled now (empty: all are making progress or idle). */
  stalled(): StalledConsumer[] {
    const at = this.now();
    return [...this.trackers].flatMap((t) => t.stalled(at) ?? []);
  }

  // Registered with the first consumer, not at construction: the meter must come from the
  // provider telemetry start-up registered, and a connection without consumers reports nothing.
  private observe(): void {
    if (this.gauge) return;
    this.gauge = true;
    const gauge = hermesMeter().createObservableGauge('hermes.bus.consumer.oldest_unacked_age', {
      unit: 's',
      description: 'how long this replica has held the oldest message it has not acked yet, per consumer (0 when it holds none)',
    });
    gauge.addCallback((result) => {
      const at = this.now();
      for (const t of this.trackers) {
        result.observe(t.oldestUnackedAgeMs(at) / 1000, {
          'messaging.system': 'nats',
          'messaging.destination.name': t.stream,
          'messaging.consumer.group.name': t.consumer,
        });
      }
    });
  }
}
