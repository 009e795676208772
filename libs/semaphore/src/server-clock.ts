/** A timer of a {@link SemaphoreClock}. */
export interface ClockTimer {
  cancel(): void;
}

/**
 * The time a semaphore goes by: when leases, back-offs, token budgets, kept permits and acquire
 * timeouts run out. Every process sharing a pool must agree on `now` (the default is the NATS
 * server's clock); a test hands in a clock of its own to move time without waiting for it.
 */
export interface SemaphoreClock {
  now(): number;
  /** Calls `fn` once `ms` have passed on this clock (what it returns is awaited by a clock that can). Never keeps the process alive. */
  setTimer(fn: () => unknown, ms: number): ClockTimer;
  /** Learns from a freshly delivered KV entry's server write time; a clock that is not the server's ignores it. */
  observe(serverTime: Date): void;
}

/**
 * Leases are compared across machines, so they use the NATS server's clock rather than each
 * process's own: every KV entry carries the server's write time, and an entry seen moments after
 * it was written tells us the offset (minus the delivery latency, which only makes leases look a
 * little younger). The largest recent sample is the least delayed one.
 */
export class ServerClock implements SemaphoreClock {
  private samples: number[] = [];
  private offset = 0;

  now(): number {
    return Date.now() + this.offset;
  }

  setTimer(fn: () => unknown, ms: number): ClockTimer {
    const timer = setTimeout(() => void fn(), ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  }

  observe(serverTime: Date): void {
    this.samples.push(serverTime.getTime() - Date.now());
    if (this.samples.length > 32) this.samples.shift();
    this.offset = Math.max(...this.samples);
  }
}
