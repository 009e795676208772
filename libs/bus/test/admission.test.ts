import { describe, expect, it } from 'vitest';
import { admissionOf } from '../src/queue-gauge.js';

const bounds = { noticeWaitMs: 10_000, maxWaitMs: 60_000 };
const q = (jobs: number, wait: number | null) => ({ jobs_ahead: jobs, estimated_wait_ms: wait });

describe('admissionOf', () => {
  it('admits without a word when nothing waits or the wait is short', () => {
    expect(admissionOf(undefined, bounds)).toEqual({ admit: true });
    expect(admissionOf(q(0, null), bounds)).toEqual({ admit: true });
    expect(admissionOf(q(5, 9_999), bounds)).toEqual({ admit: true });
  });

  it('admits with the queue from the notice wait on, and when the pace is unknown (no runtime took a job lately)', () => {
    expect(admissionOf(q(50, 10_000), bounds)).toEqual({ admit: true, queue: q(50, 10_000) });
    expect(admissionOf(q(500, 60_000), bounds)).toEqual({ admit: true, queue: q(500, 60_000) });
    // Every runtime down: accepted durably and told, never refused on a guess.
    expect(admissionOf(q(10_000, null), bounds, 1000)).toEqual({ admit: true, queue: q(10_000, null) });
  });

  it('refuses above the bound, with the time until the wait is back under it (at least 1 s)', () => {
    expect(admissionOf(q(600, 90_000), bounds)).toEqual({ admit: false, queue: q(600, 90_000), retryAfterMs: 30_000 });
    expect(admissionOf(q(400, 60_001), bounds)).toMatchObject({ admit: false, retryAfterMs: 1000 });
  });

  it('refuses a task whose own deadline is shorter than the bound at that deadline: it would time out queued', () => {
    expect(admissionOf(q(100, 20_000), bounds, 15_000)).toMatchObject({ admit: false, retryAfterMs: 5000 });
    expect(admissionOf(q(100, 20_000), bounds, 30_000)).toEqual({ admit: true, queue: q(100, 20_000) });
  });

  it('with ADMISSION_MAX_WAIT_MS 0 only the deadline refuses', () => {
    const open = { noticeWaitMs: 10_000, maxWaitMs: 0 };
    expect(admissionOf(q(10_000, 3_600_000), open)).toMatchObject({ admit: true });
    expect(admissionOf(q(10_000, 3_600_000), open, 1_800_000)).toMatchObject({ admit: false, retryAfterMs: 1_800_000 });
  });
});
