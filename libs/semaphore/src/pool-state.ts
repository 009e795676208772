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
  holders: Record<string, { exp: number; est: number; bg?: true }>;
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
  /** Background work (memory extraction, summaries): served within the pool's background share. */
  bg?: true;
}

/**
 * How waiting and the background share shape the order of service. Every process of a cluster
 * grants others' waiters too, so all must be started with the same values (they come from the
 * same LLM settings).
 */
export interface ServicePolicy {
  /** Waiting this long raises a waiter by one priority level, so low-priority work never starves. */
  agingMs: number;
  /** Fraction of the capacity kept for background waiters while they are below it (0 keeps none). */
  backgroundMinShare: number;
  /** Fraction of the capacity background holders may never exceed. */
  backgroundMaxShare: number;
}

export interface PoolSettings {
  capacity: number;
  tpm?: number | null;
}

/** Milliseconds of waiting that raise a waiter by one priority level by default (LLM_PRIORITY_AGING_MS). */
export const AGING_MS = 30_000;

export const DEFAULT_SERVICE_POLICY: ServicePolicy = { agingMs: AGING_MS, backgroundMinShare: 0.1, backgroundMaxShare: 0.5 };

/**
 * The background share in permits: at least one permit each way when the share is above 0, so a
 * small pool neither locks background work out nor lets it take every permit.
 */
export function backgroundShare(capacity: number, p: ServicePolicy): { min: number; max: number } {
  const max = p.backgroundMaxShare <= 0 ? 0 : Math.min(capacity, Math.max(1, Math.floor(p.backgroundMaxShare * capacity)));
  const min = p.backgroundMinShare <= 0 ? 0 : Math.min(max, Math.max(1, Math.ceil(p.backgroundMinShare * capacity)));
  return { min, max };
}

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

export function effectivePriority(w: Pick<Waiter, 'prio' | 't'>, now: number, agingMs: number): number {
  return w.prio + (agingMs > 0 ? Math.floor((now - w.t) / agingMs) : 0);
}

/** Waiters in the order they are served: effective priority, then arrival. */
export function serviceOrder<W extends Pick<Waiter, 'prio' | 't' | 'id'>>(waiters: readonly W[], now: number, agingMs: number): W[] {
  const rank = (w: W) => effectivePriority(w, now, agingMs);
  return [...waiters].sort((a, b) => rank(b) - rank(a) || a.t - b.t || (a.id < b.id ? -1 : 1));
}

export const inUse = (s: PoolState) => Object.keys(s.holders).length;

/**
 * The waiters that may take a permit now, in service order, stopping at the first one the token
 * budget cannot cover (no overtaking, or large prompts would starve). The background share is the
 * one exception to the order: a background waiter past the maximum share is passed over, and
 * while background waiters hold less than the minimum share, that many free permits are theirs
 * whoever is ahead of them (otherwise saturated interactive work would hold them off until aging).
 */
export function grantable(s: PoolState, now: number, policy: ServicePolicy): Waiter[] {
  if (now < s.backoff_until) return [];
  let free = s.capacity - inUse(s);
  if (free <= 0) return [];
  const share = backgroundShare(s.capacity, policy);
  let bgHeld = Object.values(s.holders).filter((h) => h.bg).length;
  let bgWaiting = s.waiters.filter((w) => w.bg).length;
  const out: Waiter[] = [];
  let tokens = s.tokens;
  for (const w of serviceOrder(s.waiters, now, policy.agingMs)) {
    if (free <= 0) break;
    if (w.bg ? bgHeld >= share.max : free <= Math.min(bgWaiting, Math.max(0, share.min - bgHeld))) continue;
    if (s.tpm !== null && tokens < Math.min(w.est, s.tpm)) break;
    tokens -= w.est;
    free--;
    if (w.bg) {
      bgHeld++;
      bgWaiting--;
    }
    out.push(w);
  }
  return out;
}

/** Moves a waiter to the holders, spending its estimated tokens. */
export function grant(s: PoolState, w: Waiter, now: number, leaseMs: number): void {
  s.waiters = s.waiters.filter((x) => x.id !== w.id);
  s.holders[w.id] = { exp: now + leaseMs, est: w.est, ...(w.bg ? { bg: true as const } : {}) };
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
