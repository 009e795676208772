/**
 * The state of one pool, stored as a single JetStream KV value and changed only by
 * compare-and-set, so every grant is checked against the exact state it changes: that is what
 * makes the cap hold across any number of processes. Times are on the server-aligned clock.
 */
export interface PoolState {
  v: 1;
  /** Permits that may be held at once. */
  capacity: number;
  /** The capacity from configuration last applied; a new configured value overrides live changes. */
  configured_capacity: number;
  /** Tokens per minute for the pool, or null for no token budget. */
  tpm: number | null;
  /** Token bucket level (may go negative after an under-estimate) and when it was last refilled. */
  tokens: number;
  tokens_at: number;
  /** Granted permits: id → lease expiry, estimated tokens. */
  holders: Record<string, { exp: number; est: number }>;
  /** Waiting acquirers in arrival order; `exp` is their heartbeat lease. */
  waiters: Waiter[];
  /** No grants before this time (a provider said 429, or kept failing). */
  backoff_until: number;
  backoff_reason: string | null;
  /** Consecutive failed calls, reset by a success. */
  failures: number;
}

export interface Waiter {
  id: string;
  /** Arrival time: the order of service. */
  t: number;
  /** Higher is served first; waiting ages a waiter up (see effectivePriority). */
  prio: number;
  est: number;
  exp: number;
}

export interface PoolSettings {
  capacity: number;
  tpm?: number | null;
}

/** Seconds of waiting that raise a waiter by one priority level, so batch work never starves. */
export const AGING_MS = 30_000;

export function newPoolState(s: PoolSettings, now: number): PoolState {
  const tpm = s.tpm ?? null;
  return {
    v: 1,
    capacity: s.capacity,
    configured_capacity: s.capacity,
    tpm,
    tokens: tpm ?? 0,
    tokens_at: now,
    holders: {},
    waiters: [],
    backoff_until: 0,
    backoff_reason: null,
    failures: 0,
  };
}

/** Drops holders and waiters whose lease ran out (their process died or hung) and refills tokens. */
export function expire(s: PoolState, now: number): boolean {
  let changed = false;
  for (const [id, h] of Object.entries(s.holders)) {
    if (h.exp <= now) {
      delete s.holders[id];
      changed = true;
    }
  }
  const alive = s.waiters.filter((w) => w.exp > now);
  if (alive.length !== s.waiters.length) {
    s.waiters = alive;
    changed = true;
  }
  if (s.tpm !== null && now > s.tokens_at) {
    const refilled = Math.min(s.tpm, s.tokens + ((now - s.tokens_at) * s.tpm) / 60_000);
    if (refilled !== s.tokens) changed = true;
    s.tokens = refilled;
    s.tokens_at = now;
  }
  return changed;
}

export function effectivePriority(w: Waiter, now: number): number {
  return w.prio + Math.floor((now - w.t) / AGING_MS);
}

/** Waiters in the order they are served: effective priority, then arrival. */
export function serviceOrder(s: PoolState, now: number): Waiter[] {
  return [...s.waiters].sort((a, b) => effectivePriority(b, now) - effectivePriority(a, now) || a.t - b.t || (a.id < b.id ? -1 : 1));
}

export const inUse = (s: PoolState) => Object.keys(s.holders).length;

/**
 * The waiters that may take a permit now: the first `free` in service order, stopping at the
 * first one the token budget cannot cover (no overtaking, or large prompts would starve).
 */
export function grantable(s: PoolState, now: number): Waiter[] {
  if (now < s.backoff_until) return [];
  const free = s.capacity - inUse(s);
  if (free <= 0) return [];
  const out: Waiter[] = [];
  let tokens = s.tokens;
  for (const w of serviceOrder(s, now).slice(0, free)) {
    if (s.tpm !== null && tokens < Math.min(w.est, s.tpm)) break;
    tokens -= w.est;
    out.push(w);
  }
  return out;
}

/** Moves a waiter to the holders, spending its estimated tokens. */
export function grant(s: PoolState, w: Waiter, now: number, leaseMs: number): void {
  s.waiters = s.waiters.filter((x) => x.id !== w.id);
  s.holders[w.id] = { exp: now + leaseMs, est: w.est };
  if (s.tpm !== null) s.tokens -= w.est;
}

/** What a holder reports when it gives its permit back. */
export interface ReleaseReport {
  /** Tokens the call really used (corrects the estimate in the budget). */
  tokens?: number;
  /** The provider answered 429: nobody calls this pool for this long. */
  rateLimitedForMs?: number;
  /** The call failed for a reason that says the provider is unwell (5xx, connection). */
  failed?: boolean;
}

/** After this many failures in a row the pool backs off, doubling up to MAX_FAILURE_BACKOFF_MS. */
export const FAILURES_BEFORE_BACKOFF = 3;
export const MAX_FAILURE_BACKOFF_MS = 30_000;

export function release(s: PoolState, id: string, report: ReleaseReport, now: number): void {
  const held = s.holders[id];
  delete s.holders[id];
  if (held && s.tpm !== null && report.tokens !== undefined) s.tokens += held.est - report.tokens;
  if (report.rateLimitedForMs !== undefined) {
    s.backoff_until = Math.max(s.backoff_until, now + report.rateLimitedForMs);
    s.backoff_reason = 'rate_limited';
  }
  if (report.failed) {
    s.failures += 1;
    if (s.failures >= FAILURES_BEFORE_BACKOFF) {
      const ms = Math.min(MAX_FAILURE_BACKOFF_MS, 1000 * 2 ** (s.failures - FAILURES_BEFORE_BACKOFF));
      s.backoff_until = Math.max(s.backoff_until, now + ms);
      s.backoff_reason = 'failing';
    }
  } else if (report.rateLimitedForMs === undefined) {
    s.failures = 0;
  }
}
