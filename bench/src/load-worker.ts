import { performance } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';
import { DistributedSemaphore } from '@hermes/semaphore';
import { LlmClient, PoolResolver, roleEndpoints, semaphorePermits, type Permit, type PermitProvider } from '@hermes/llm';
import { localPermits } from './local-permits.js';
import { micro, type GoMessage, type LoadResult } from './worker-protocol.js';

export const BENCH_POOL = 'bench';

export interface CallTiming {
  permitWaitMs: number;
  /** From the grant arriving here to the release being written: how long this call kept the permit. */
  heldMs: number;
  releaseMs: number;
}

/**
 * The permit provider services use (`semaphorePermits`), with a stopwatch around acquire and
 * release so the bench can tell queueing and write time apart from the model's latency.
 */
function timedPermits(inner: PermitProvider, onCall: (t: CallTiming) => void): PermitProvider {
  return {
    async acquire(req) {
      const started = performance.now();
      const permit = await inner.acquire(req);
      const granted = performance.now();
      const permitWaitMs = granted - started;
      const timed: Permit = {
        ...(permit.waitedMs !== undefined ? { waitedMs: permit.waitedMs } : {}),
        release: async (report) => {
          const releasing = performance.now();
          await permit.release(report);
          const released = performance.now();
          onCall({ permitWaitMs, heldMs: released - granted, releaseMs: released - releasing });
        },
      };
      return timed;
    },
  };
}

/**
 * An LLM client wired like `openLlmClient` does it, against the scripted model and one pool of
 * `capacity` (or, for the baseline, with an in-process semaphore instead of the distributed one).
 */
export async function openBenchClient(o: {
  kv: KV;
  llmUrl: string;
  capacity: number;
  leaseMs: number;
  permits: 'semaphore' | 'local';
  onCall: (t: CallTiming) => void;
}) {
  const pools = new PoolResolver([{ name: BENCH_POOL, capacity: o.capacity }], { capacity: o.capacity });
  const sem =
    o.permits === 'semaphore' ? await DistributedSemaphore.open({ kv: o.kv, poolSettings: (p) => pools.settingsFor(p), leaseMs: o.leaseMs }) : undefined;
  const llm = new LlmClient({
    roles: roleEndpoints({ OPENAI_BASE_URL: o.llmUrl, OPENAI_API_KEY: 'bench', HERMES_MODEL_WORKER: 'bench-model' }),
    pools,
    permits: timedPermits(sem ? semaphorePermits(sem) : localPermits(o.capacity), o.onCall),
    timeoutMs: 30_000,
    maxRetries: 0,
    permitTimeoutMs: 60_000,
  });
  return { llm, close: async () => sem?.close() };
}

/** Collects the permit timings of calls whose release ends inside the measured window. */
export class PermitTimings {
  readonly permitWaitMs: number[] = [];
  readonly heldMs: number[] = [];
  readonly releaseMs: number[] = [];
  window?: GoMessage;

  measuring(): boolean {
    const now = Date.now();
    return this.window !== undefined && now >= this.window.windowStart && now < this.window.windowEnd;
  }

  record = (t: CallTiming): void => {
    if (!this.measuring()) return;
    this.permitWaitMs.push(micro(t.permitWaitMs));
    this.heldMs.push(micro(t.heldMs));
    this.releaseMs.push(micro(t.releaseMs));
  };
}

/** Where this process's loops sit among all of them, and over how long their first calls are spread. */
export interface StartSpread {
  processIndex: number;
  processes: number;
  capacity: number;
  spreadMs: number;
}

/**
 * When a loop makes its first call. Loops started together would take their permits together
 * and, since a freed permit goes straight to the next waiter, finish in lockstep forever: the
 * count in the window would then move in steps of N calls. Spreading the first N calls evenly
 * over one latency gives the permits evenly spread phases; the loops beyond N queue behind them.
 */
export function firstCallDelayMs(s: StartSpread, localIndex: number): number {
  const global = localIndex * s.processes + s.processIndex;
  const slot = global % s.capacity;
  const queued = global >= s.capacity ? 0.5 : 0;
  return ((slot + queued) * s.spreadMs) / s.capacity;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `loops` call loops until the window ends, then lets the calls in flight finish (so every
 * permit is released) and reports what ended inside the window.
 */
export async function runLoad(o: {
  llm: LlmClient;
  loops: number;
  go: GoMessage;
  timings: PermitTimings;
  start: StartSpread;
}): Promise<Omit<LoadResult, 'kv'>> {
  o.timings.window = o.go;
  const result: Omit<LoadResult, 'kv'> = {
    mode: 'load',
    cpuMs: 0,
    calls: 0,
    errors: 0,
    errorMessages: [],
    permitWaitMs: o.timings.permitWaitMs,
    heldMs: o.timings.heldMs,
    releaseMs: o.timings.releaseMs,
    chatMs: [],
  };
  const messages = [{ role: 'user' as const, content: 'bench' }];
  let cpuAtStart: NodeJS.CpuUsage | undefined;
  const cpuStart = setTimeout(() => (cpuAtStart = process.cpuUsage()), Math.max(0, o.go.windowStart - Date.now()));
  const cpuEnd = setTimeout(
    () => {
      const used = process.cpuUsage(cpuAtStart);
      result.cpuMs = (used.user + used.system) / 1000;
    },
    Math.max(0, o.go.windowEnd - Date.now()),
  );
  const loop = async (_: unknown, i: number) => {
    await sleep(firstCallDelayMs(o.start, i));
    while (Date.now() < o.go.windowEnd) {
      const started = performance.now();
      try {
        await o.llm.chat({ role: 'worker', messages });
      } catch (err) {
        result.errors++;
        if (result.errorMessages.length < 5) result.errorMessages.push(String((err as Error)?.message ?? err));
        continue;
      }
      const ended = Date.now();
      if (ended < o.go.windowStart || ended >= o.go.windowEnd) continue;
      result.calls++;
      result.chatMs.push(micro(performance.now() - started));
    }
  };
  await Promise.all(Array.from({ length: o.loops }, loop));
  clearTimeout(cpuStart);
  clearTimeout(cpuEnd);
  return result;
}
