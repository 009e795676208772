import { setTimeout as sleep } from 'node:timers/promises';
import { isUnansweredRequest } from '@hermes/bus';

/** Whether an error means the dependency is away: a request nobody answered (see isUnansweredRequest). */
export const isOutage = isUnansweredRequest;

/** One pause while a dependency is away, as reported to the task's events. */
export interface DependencyWait {
  /** The service waited for: `toolbus`, `memory`. */
  service: string;
  code: string;
  /** Pauses so far for this request, this one included. */
  attempt: number;
  delayMs: number;
  /** Time since the first failure of this request. */
  waitedMs: number;
}

export interface OutagePolicy {
  /** How long one request may wait for its dependency to come back before its error stands (HERMES_OUTAGE_BUDGET_MS). */
  budgetMs: number;
  /** First pause; doubled per pause up to `maxDelayMs`, each with ±50 % jitter so replicas do not retry in step. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs `request`, and while its dependency is away waits it out with exponential back-off and
 * jitter, up to the outage budget, telling `onWait` each time. An ordinary restart of a service
 * therefore costs the task time, not an attempt: the job's delivery is held (heartbeats go on)
 * rather than handed back for redelivery, which would count against RUNTIME_MAX_ATTEMPTS.
 */
export async function waitOutOutage<T>(
  o: OutagePolicy & { service: string; signal?: AbortSignal; onWait?: (w: DependencyWait) => void },
  request: () => Promise<T>,
): Promise<T> {
  const base = o.baseDelayMs ?? 250;
  const max = o.maxDelayMs ?? 5000;
  let first: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      if (!isOutage(err)) throw err;
      first ??= Date.now();
      const waitedMs = Date.now() - first;
      if (waitedMs >= o.budgetMs) throw err;
      const nominal = Math.min(max, base * 2 ** (attempt - 1));
      const delayMs = Math.min(Math.round(nominal * (0.5 + Math.random())), Math.max(0, o.budgetMs - waitedMs));
      o.onWait?.({ service: o.service, code: err.code, attempt, delayMs, waitedMs });
      await sleep(delayMs, undefined, o.signal ? { signal: o.signal } : {});
    }
  }
}

/** A job's way of sending a request that waits out its dependency's outage (see waitOutOutage). */
export type WaitOut = <T>(service: string, request: () => Promise<T>) => Promise<T>;

/** Sends the request once, as it is: for code that runs without an outage policy. */
export const noWaiting: WaitOut = (_service, request) => request();
