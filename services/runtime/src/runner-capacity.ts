import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KV } from '@nats-io/kv';
import { runnerCapacityKey, type StoredRunnerCapacity } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';

/** How often a replica rewrites its record; a record is live for three of these. */
export const RUNNER_REPORT_MS = 30_000;

/** This process's name in its record key: KV keys take letters, digits, `-`, `_` and `=` here. */
export function runnerInstance(): string {
  return `${hostname().replace(/[^A-Za-z0-9_-]/g, '_')}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * Keeps this replica's capacity record in the semaphore bucket while it consumes jobs, so
 * `hermes llm status` can tell when the live runtimes together cannot reach a pool's cap. Best
 * effort: a failed write is logged, never a reason to stop taking jobs. `stop` deletes the record.
 */
export function reportRunnerCapacity(o: { kv: KV; pool: string; concurrency: number; logger: Logger; intervalMs?: number }): { stop: () => Promise<void> } {
  const intervalMs = o.intervalMs ?? RUNNER_REPORT_MS;
  const instance = runnerInstance();
  const key = runnerCapacityKey(o.pool, instance);
  const write = () => {
    const now = Date.now();
    const record: StoredRunnerCapacity = {
      v: 1,
      pool: o.pool,
      instance,
      concurrency: o.concurrency,
      reported_at: new Date(now).toISOString(),
      expires_at: new Date(now + 3 * intervalMs).toISOString(),
    };
    return o.kv.put(key, JSON.stringify(record)).then(
      () => undefined,
      (err: unknown) => o.logger.debug({ err, key }, 'runner capacity record not written; hermes llm status may miss this replica'),
    );
  };
  void write();
  const timer = setInterval(() => void write(), intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await o.kv.delete(key).catch(() => undefined);
    },
  };
}
