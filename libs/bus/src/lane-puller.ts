import type { Consumer, JsMsg } from '@nats-io/jetstream';

/** How soon to look again while the ahead lane still has jobs waiting (another replica's pull may take them). */
export const AHEAD_RECHECK_MS = 25;
/**
 * The ahead lane's pulls expire at the client's minimum: once the replica's slots are full it
 * stops asking, so an ahead job goes to a replica with a free slot rather than waiting here.
 */
export const AHEAD_EXPIRES_MS = 1000;
/** Pause before pulling again after a pull failed (both the single-lane loop and the lanes). */
export const PULL_RETRY_MS = 500;

/** What the puller needs of the work consumer it feeds. */
export interface LaneHost {
  readonly concurrency: number;
  /** Handlers running now. */
  running(): number;
  /** Starts a handler for the message (counted by running() until it settles). */
  start(msg: JsMsg): void;
  /** A message arrived (counted, tracked for liveness). */
  received(msg: JsMsg): void;
  /** Stopped, or the connection is closing: open no pull. */
  done(): boolean;
  /** Keeps a held message from being redelivered while it waits for a slot. */
  heartbeatMs: number;
  warn(err: unknown, lane: string): void;
}

interface Lane {
  readonly name: 'ahead' | 'main';
  readonly consumer: Consumer;
  readonly expiresMs: number;
  open: boolean;
  stop?: () => void;
  readonly held: { msg: JsMsg; heartbeat: NodeJS.Timeout }[];
}

/**
 * Feeds a work consumer from two durables, the ahead lane first: a job there takes the next free
 * slot before any job of the main lane, however deep the main queue (strict priority, as a work
 * queue cannot reorder one consumer's messages). Each lane keeps at most one pull of one message
 * open, and only while a slot is free; the main lane opens only once the ahead lane is known to
 * have nothing waiting: its consumer says so (one consumer-info request), or its open pull expired
 * empty. A job published on both lanes at once may be delivered into the last free slot by both
 * pulls: the second is held (with heartbeats) and started when a slot frees, ahead first, so a
 * replica holds at most one message beyond its concurrency and never runs more than it.
 */
export class LanePuller {
  private readonly ahead: Lane;
  private readonly main: Lane;
  /** The ahead lane's pull, open without a break, has expired with nothing to deliver. */
  private aheadEmpty = false;
  private checking = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly loops = new Set<Promise<void>>();

  constructor(
    private readonly h: LaneHost,
    consumers: { ahead: Consumer; main: Consumer; mainExpiresMs: number },
  ) {
    this.ahead = { name: 'ahead', consumer: consumers.ahead, expiresMs: AHEAD_EXPIRES_MS, open: false, held: [] };
    this.main = { name: 'main', consumer: consumers.main, expiresMs: consumers.mainExpiresMs, open: false, held: [] };
  }

  /** Messages taken and not settled: running and held. */
  private claimed(): number {
    return this.h.running() + this.ahead.held.length + this.main.held.length;
  }

  private free(): boolean {
    return !this.h.done() && this.claimed() < this.h.concurrency;
  }

  /** Call when a slot frees (and once to begin): starts held messages, then opens pulls for free slots. */
  pump(): void {
    this.startHeld();
    if (!this.free()) return;
    if (!this.ahead.open) this.open(this.ahead);
    if (this.main.open || this.checking) return;
    if (this.aheadEmpty) return this.open(this.main);
    this.checking = true;
    void this.ahead.consumer.info(false).then(
      (info) => {
        this.checking = false;
        if (info.num_pending === 0) {
          if (this.free() && !this.main.open) this.open(this.main);
        } else {
          // Being delivered: to our open pull (which pumps when it has) or to another replica's.
          this.later(AHEAD_RECHECK_MS);
        }
      },
      (err: unknown) => {
        this.checking = false;
        if (!this.h.done()) this.h.warn(err, 'ahead');
        this.later(PULL_RETRY_MS);
      },
    );
  }

  private later(ms: number): void {
    if (this.timer || this.h.done()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, ms);
  }
  /** Stops pulling and hands held messages back at once (another replica takes them). */
  async stop(): Promise<JsMsg[]> {
    clearTimeout(this.timer);
    this.ahead.stop?.();
    this.main.stop?.();
    await Promise.all([...this.loops]);
    const held = [...this.ahead.held, ...this.main.held];
    this.ahead.held.length = 0;
    this.main.held.length = 0;
    for (const { msg, heartbeat } of held) {
      clearInterval(heartbeat);
      msg.nak();
    }
    return held.map((x) => x.msg);
  }

  private startHeld(): void {
    while (this.h.running() < this.h.concurrency) {
      const next = this.ahead.held.shift() ?? this.main.held.shift();
      if (!next) return;
      clearInterval(next.heartbeat);
      this.h.start(next.msg);
    }
  }

  private open(lane: Lane): void {
    lane.open = true;
    const loop = (async () => {
      let outcome: 'delivered' | 'empty' | 'failed' = 'empty';
      try {
        const batch = await lane.consumer.fetch({ max_messages: 1, expires: lane.expiresMs });
        lane.stop = () => batch.stop();
        if (this.h.done()) batch.stop();
        for await (const msg of batch) {
          outcome = 'delivered';
          this.h.received(msg);
          lane.held.push({ msg, heartbeat: setInterval(() => msg.working(), this.h.heartbeatMs) });
          this.startHeld();
        }
      } catch (err) {
        outcome = 'failed';
        if (!this.h.done()) {
          this.h.warn(err, lane.name);
          await new Promise((r) => setTimeout(r, PULL_RETRY_MS));
        }
      } finally {
        lane.open = false;
        lane.stop = undefined;
      }
      if (lane === this.ahead) this.aheadEmpty = outcome === 'empty';
      this.pump();
      // Found empty only counts while the pull stays open: a lane not asked meanwhile may have filled.
      if (!this.ahead.open) this.aheadEmpty = false;
    })();
    this.loops.add(loop);
    void loop.finally(() => this.loops.delete(loop));
  }
}
