/** What one `npm run bench` measures; every field can be set by env or by a `--flag`. */
export interface BenchOptions {
  /** The pool's cap N. */
  capacity: number;
  /** Scripted model latency L per call. */
  latencyMs: number;
  /** Worker process counts, one saturation run each. */
  processes: number[];
  /** Concurrent call loops over all processes (default 2N, enough to keep N permits busy). */
  loops: number;
  warmupS: number;
  durationS: number;
  /** Sequential acquire→release pairs measured for the uncontended overhead (after warm-up). */
  overheadIterations: number;
  overheadWarmup: number;
  leaseMs: number;
  /** Where semaphore.json and semaphore.md go. */
  resultsDir: string;
}

/** One setting of a benchmark: its `--flag`, its environment variable and how it is applied. */
export interface Setting<T> {
  flag: string;
  env: string;
  apply(o: T, value: string): void;
}

/** A `--flag value` or `--flag=value` pair from the command line. */
export interface FlagValue {
  flag: string;
  value: string;
}

export const int = (name: string, value: string, min: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new RangeError(`${name} must be a whole number >= ${min}, got "${value}"`);
  return n;
};

export const num = (name: string, value: string, min: number): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new RangeError(`${name} must be a number >= ${min}, got "${value}"`);
  return n;
};

/** Splits the command line into flag/value pairs; every flag takes a value. */
export function splitFlags(argv: readonly string[]): FlagValue[] {
  const args = [...argv];
  const out: FlagValue[] = [];
  while (args.length > 0) {
    const arg = args.shift()!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new RangeError(`unknown argument "${arg}" (flags look like --name value)`);
    const value = m[2] ?? args.shift();
    if (value === undefined) throw new RangeError(`--${m[1]} needs a value`);
    out.push({ flag: m[1]!, value });
  }
  return out;
}

/** Applies env first, then the flags this benchmark knows (later flags win); returns the flags it did not know. */
export function applySettings<T>(opts: T, settings: readonly Setting<T>[], env: NodeJS.ProcessEnv, flags: readonly FlagValue[]): FlagValue[] {
  for (const s of settings) {
    const value = env[s.env];
    if (value !== undefined && value !== '') s.apply(opts, value);
  }
  const unknown: FlagValue[] = [];
  for (const f of flags) {
    const setting = settings.find((s) => s.flag === f.flag);
    if (setting) setting.apply(opts, f.value);
    else unknown.push(f);
  }
  return unknown;
}

/** Throws for flags no benchmark knows, listing the known ones. */
export function rejectUnknown(unknown: readonly FlagValue[], known: readonly string[]): void {
  const bad = unknown.find((f) => !known.includes(f.flag));
  if (bad) throw new RangeError(`unknown argument "--${bad.flag}" (known: ${[...new Set(known)].map((k) => `--${k}`).join(', ')})`);
}

export const semaphoreSettings: Setting<BenchOptions>[] = [
  { flag: 'capacity', env: 'BENCH_CAPACITY', apply: (o, v) => (o.capacity = int('capacity', v, 1)) },
  { flag: 'latency-ms', env: 'BENCH_LATENCY_MS', apply: (o, v) => (o.latencyMs = int('latency-ms', v, 1)) },
  {
    flag: 'processes',
    env: 'BENCH_PROCESSES',
    apply: (o, v) => (o.processes = v.split(',').map((p) => int('processes', p.trim(), 1))),
  },
  { flag: 'loops', env: 'BENCH_LOOPS', apply: (o, v) => (o.loops = int('loops', v, 1)) },
  { flag: 'warmup-s', env: 'BENCH_WARMUP_S', apply: (o, v) => (o.warmupS = num('warmup-s', v, 0)) },
  { flag: 'duration-s', env: 'BENCH_DURATION_S', apply: (o, v) => (o.durationS = num('duration-s', v, 0.5)) },
  { flag: 'overhead-iterations', env: 'BENCH_OVERHEAD_ITERATIONS', apply: (o, v) => (o.overheadIterations = int('overhead-iterations', v, 10)) },
  { flag: 'overhead-warmup', env: 'BENCH_OVERHEAD_WARMUP', apply: (o, v) => (o.overheadWarmup = int('overhead-warmup', v, 0)) },
  { flag: 'lease-ms', env: 'BENCH_LEASE_MS', apply: (o, v) => (o.leaseMs = int('lease-ms', v, 500)) },
  { flag: 'results-dir', env: 'BENCH_RESULTS_DIR', apply: (o, v) => (o.resultsDir = v) },
];

/**
 * The semaphore benchmark's options: defaults, then env (`BENCH_CAPACITY=8`), then arguments
 * (`--capacity 8` or `--capacity=8`). Flags in `ignore` (other benchmarks' flags) are skipped;
 * any other unknown flag throws.
 */
export function benchOptions(o: { argv: readonly string[]; env: NodeJS.ProcessEnv; defaultResultsDir: string; ignore?: readonly string[] }): BenchOptions {
  const opts: BenchOptions = {
    capacity: 32,
    latencyMs: 200,
    processes: [1, 2, 4],
    loops: 0,
    warmupS: 2,
    durationS: 10,
    overheadIterations: 2000,
    overheadWarmup: 200,
    leaseMs: 15_000,
    resultsDir: o.defaultResultsDir,
  };
  const unknown = applySettings(opts, semaphoreSettings, o.env, splitFlags(o.argv));
  rejectUnknown(unknown, [...semaphoreSettings.map((s) => s.flag), ...(o.ignore ?? [])]);
  if (opts.loops === 0) opts.loops = 2 * opts.capacity;
  return opts;
}
