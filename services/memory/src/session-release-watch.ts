import type { Redis } from 'ioredis';
import type { Logger } from '@hermes/telemetry';

/** One lock waiter's view of its session's release channel. */
export interface ReleaseWaiter {
  /** Settles once releases reach this waiter (the subscription is confirmed, or failed: then it only polls). */
  readonly ready: Promise<void>;
  /** Resolves at the first release since the last call (at once if one came meanwhile), or after `ms`. */
  next(ms: number): Promise<void>;
  close(): void;
}

/**
 * Wakes lock waiters when a session's lock is released (the release script publishes on the
 * session's channel), so a queued task starts right after the one before it rather than at its
 * next poll. One subscriber connection per process, subscribed to a channel only while someone
 * waits on it. A waiter tries the lock again once its subscription is confirmed, so a release
 * cannot slip between its last try and its wait. Best effort all the same: a waiter still polls,
 * which covers a lapsed lease (nobody publishes) and a message lost to a reconnect.
 */
export class SessionReleaseWatch {
  private readonly channels = new Map<string, { ready: Promise<void>; waiters: Set<Waiter> }>();

  private constructor(
    private readonly sub: Redis,
    private readonly logger: Logger,
  ) {
    sub.on('message', (channel: string) => {
      for (const w of this.channels.get(channel)?.waiters ?? []) w.notify();
    });
  }

  /** A subscriber connection of its own (a subscribed connection can run nothing else). */
  static open(redis: Redis, logger: Logger): SessionReleaseWatch {
    const sub = redis.duplicate({ connectionName: 'hermes-memory-releases', enableOfflineQueue: true });
    // Errors are the main connection's to report; this one just reconnects and resubscribes.
    sub.on('error', () => undefined);
    return new SessionReleaseWatch(sub, logger);
  }

  watch(channel: string): ReleaseWaiter {
    let entry = this.channels.get(channel);
    if (!entry) {
      const ready = this.sub.subscribe(channel).then(
        () => undefined,
        (err: unknown) => this.logger.debug({ err, channel }, 'could not subscribe to session releases; polling'),
      );
      this.channels.set(channel, (entry = { ready, waiters: new Set() }));
    }
    const w = new Waiter(entry.ready, () => this.forget(channel, w));
    entry.waiters.add(w);
    return w;
  }

  close(): void {
    for (const { waiters } of this.channels.values()) for (const w of waiters) w.notify();
    this.channels.clear();
    this.sub.disconnect();
  }

  private forget(channel: string, w: Waiter): void {
    const entry = this.channels.get(channel);
    if (!entry?.waiters.delete(w) || entry.waiters.size > 0) return;
    this.channels.delete(channel);
    this.sub.unsubscribe(channel).catch(() => undefined);
  }
}

class Waiter implements ReleaseWaiter {
  private released = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly ready: Promise<void>,
    readonly close: () => void,
  ) {}

  notify(): void {
    this.released = true;
    this.wake?.();
  }

  async next(ms: number): Promise<void> {
    if (!this.released) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
      this.wake = undefined;
    }
    this.released = false;
  }
}
