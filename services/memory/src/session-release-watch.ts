import type { Redis } from 'ioredis';
import type { Logger } from '@hermes/telemetry';

/**
 * Wakes lock waiters when a session's lock is released (the release script publishes on the
 * session's channel), so a queued task starts right after the one before it rather than at its
 * next poll. One subscriber connection per process, subscribed to a channel only while someone
 * waits on it. Best effort: a waiter still polls, which covers a lapsed lease (nobody publishes)
 * and a notification lost to a reconnect.
 */
export class SessionReleaseWatch {
  private readonly waiters = new Map<string, Set<() => void>>();

  private constructor(
    private readonly sub: Redis,
    private readonly logger: Logger,
  ) {
    sub.on('message', (channel: string) => {
      for (const wake of this.waiters.get(channel) ?? []) wake();
    });
  }

  /** A subscriber connection of its own (a subscribed connection can run nothing else). */
  static open(redis: Redis, logger: Logger): SessionReleaseWatch {
    const sub = redis.duplicate({ connectionName: 'hermes-memory-releases', enableOfflineQueue: true });
    // Errors are the main connection's to report; this one just reconnects and resubscribes.
    sub.on('error', () => undefined);
    return new SessionReleaseWatch(sub, logger);
  }

  /** Resolves when `channel` gets a message or after `ms`, whichever comes first. */
  async wait(channel: string, ms: number): Promise<void> {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let set = this.waiters.get(channel);
    if (!set) {
      this.waiters.set(channel, (set = new Set()));
      this.sub.subscribe(channel).catch((err: unknown) => this.logger.debug({ err, channel }, 'could not subscribe to session releases; polling'));
    }
    set.add(wake);
    const timer = setTimeout(wake, ms);
    try {
      await woken;
    } finally {
      clearTimeout(timer);
      set.delete(wake);
      if (set.size === 0 && this.waiters.get(channel) === set) {
        this.waiters.delete(channel);
        this.sub.unsubscribe(channel).catch(() => undefined);
      }
    }
  }

  close(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
    this.waiters.clear();
    this.sub.disconnect();
  }
}
