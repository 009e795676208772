import type { KvTrace } from './kv-probe.js';

/**
 * How the bench talks to its worker processes: settings go in one env var, the start signal
 * comes over core NATS (so every worker starts its loops at the same moment), and the result
 * comes back as one stdout line.
 */
export interface WorkerSettings {
  mode: 'load' | 'overhead';
  natsUrl: string;
  bucket: string;
  /** Core NATS subject the parent publishes the {@link GoMessage} on. */
  controlSubject: string;
  capacity: number;
  leaseMs: number;
  /** load: the scripted model's base URL and how many call loops this process runs. */
  llmUrl?: string;
  loops?: number;
  /** load: this process's place among `processes`, and the span over which the loops' first calls are spread. */
  processIndex?: number;
  processes?: number;
  spreadMs?: number;
  /** load: the distributed semaphore, or the in-process baseline. */
  permits?: 'semaphore' | 'local';
  /** overhead: measured iterations and warm-up iterations. */
  iterations?: number;
  warmup?: number;
}

/** Loops start on receipt; calls that end inside [windowStart, windowEnd) (epoch ms) are counted. */
export interface GoMessage {
  windowStart: number;
  windowEnd: number;
}

export interface LoadResult {
  mode: 'load';
  /** CPU time (user + system) this process used during the window. */
  cpuMs: number;
  calls: number;
  errors: number;
  errorMessages: string[];
  /** Per call ended in the window: time in acquire (queueing included), holding the permit, in release, and the whole chat(). */
  permitWaitMs: number[];
  heldMs: number[];
  releaseMs: number[];
  chatMs: number[];
  /** What the semaphore asked of KV in the window. */
  kv: KvTrace;
}

export interface OverheadResult {
  mode: 'overhead';
  acquireMs: number[];
  releaseMs: number[];
}

export type WorkerResult = LoadResult | OverheadResult;

export const WORKER_SETTINGS_ENV = 'BENCH_WORKER_SETTINGS';
export const READY_LINE = 'bench-worker ready';
export const RESULT_PREFIX = 'bench-worker result ';

/** Keeps result lines short: latencies to the microsecond are plenty. */
export const micro = (ms: number) => Math.round(ms * 1000) / 1000;
