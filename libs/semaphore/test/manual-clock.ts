import type { ClockTimer, SemaphoreClock } from '../src/index.js';

interface Pending {
  at: number;
  seq: number;
  fn: () => unknown;
}

/**
 * A clock that moves only when the test says so: leases, back-offs and budgets run out without
 * the test waiting for them. Members given the same clock agree on the time, as processes sharing
 * the NATS server's clock do. Each timer that falls due is awaited (a semaphore's timer returns
 * the write it starts), so time never runs past a renewal still on its way.
 */
export class ManualClock implements SemaphoreClock {
  private t = Date.now();
  private seq = 0;
  private pending: Pending[] = [];

  now(): number {
    return this.t;
  }

  setTimer(fn: () => unknown, ms: number): ClockTimer {
    const timer: Pending = { at: this.t + Math.max(0, ms), seq: ++this.seq, fn };
    this.pending.push(timer);
    return { cancel: () => void (this.pending = this.pending.filter((p) => p !== timer)) };
  }

  observe(): void {}

  /** Moves the time `ms` forward, running every timer due on the way in order (and those they set). */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const [next] = this.pending.filter((p) => p.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq);
      if (!next) break;
      this.pending = this.pending.filter((p) => p !== next);
      this.t = Math.max(this.t, next.at);
      await next.fn();
    }
    this.t = end;
  }

  /**
   * Moves the time forward `stepMs` at a time until `done` holds, letting replies from the NATS
   * server arrive between steps (they take real time, which the clock does not count); fails after
   * `maxMs` of clock time. Resolves with the clock time it took.
   */
  async advanceUntil(done: () => boolean, o: { stepMs?: number; maxMs?: number } = {}): Promise<number> {
    const start = this.t;
    const maxMs = o.maxMs ?? 60_000;
    while (!done()) {
      if (this.t - start >= maxMs) throw new Error(`not done after ${maxMs} ms of clock time`);
      await this.advance(o.stepMs ?? 25);
      await new Promise((r) => setTimeout(r, 5));
    }
    return this.t - start;
  }
}
