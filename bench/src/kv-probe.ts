import { performance } from 'node:perf_hooks';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import { isCasConflict } from '@hermes/bus';
import { micro } from './worker-protocol.js';

/** What the semaphore asked of JetStream KV during the window. */
export interface KvTrace {
  /** Compare-and-set writes, and how many of them lost to another writer. */
  updates: number;
  conflicts: number;
  /** Reads (the semaphore reloads the pool after a lost CAS). */
  gets: number;
  /** Round trip of each CAS write, won or lost. */
  updateMs: number[];
  /** Pool changes the watch delivered, and how long after the server stored them. */
  watchEntries: number;
  watchLagMs: number[];
}

/**
 * Wraps a KV so every CAS, read and watched change is counted and timed; the semaphore does not
 * know the difference. Only what happens while `measuring()` is true is kept.
 */
export function probeKv(kv: KV, measuring: () => boolean): { kv: KV; trace: KvTrace } {
  const trace: KvTrace = { updates: 0, conflicts: 0, gets: 0, updateMs: [], watchEntries: 0, watchLagMs: [] };
  const probed = new Proxy(kv, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop === 'update') {
        return async (...args: Parameters<KV['update']>) => {
          const started = performance.now();
          try {
            return await target.update(...args);
          } catch (err) {
            if (measuring() && isCasConflict(err)) trace.conflicts++;
            throw err;
          } finally {
            if (measuring()) {
              trace.updates++;
              trace.updateMs.push(micro(performance.now() - started));
            }
          }
        };
      }
      if (prop === 'get') {
        return (...args: Parameters<KV['get']>) => {
          if (measuring()) trace.gets++;
          return target.get(...args);
        };
      }
      if (prop === 'watch') {
        return async (...args: Parameters<KV['watch']>) => {
          const iter = await target.watch(...args);
          async function* lagged(): AsyncGenerator<KvWatchEntry> {
            for await (const e of iter) {
              if (measuring() && e.isUpdate) {
                trace.watchEntries++;
                trace.watchLagMs.push(Date.now() - e.created.getTime());
              }
              yield e;
            }
          }
          const gen = lagged();
          return Object.assign(gen, { stop: () => iter.stop() });
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { kv: probed, trace };
}
