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

interface Setting {
  flag: string;
  env: string;
  apply(o: BenchOptions, value: string): void;
}

const int = (name: string, value: string, min: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new RangeError(`${name} must be a whole number >= ${min}, got "${value}"`);
  return n;
};

const num = (name: string, value: string, min: number): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new RangeError(`${name} must be a number >= ${min}, got "${value}"`);
  return n;
};

const settings: Setting[] = [
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

/** Defaults, then env (`BENCH_CAPACITY=8`), then arguments (`--capacity 8` or `--capacity=8`). */
export function benchOptions(o: { argv: readonly string[]; env: NodeJS.ProcessEnv; defaultResultsDir: string }): BenchOptions {
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
  for (const s of settings) {
    const value = o.env[s.env];
    if (value !== undefined && value !== '') s.apply(opts, value);
  }
  const args = [...o.argv];
  while (args.length > 0) {
    const arg = args.shift()!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    const setting = m && settings.find((s) => s.flag === m[1]);
    if (!m || !setting) throw new RangeError(`unknown argument "${arg}" (known: ${settings.map((s) => `--${s.flag}`).join(', ')})`);
    const value = m[2] ?? args.shift();
    if (value === undefined) throw new RangeError(`--${setting.flag} needs a value`);
    setting.apply(opts, value);
  }
  if (opts.loops === 0) opts.loops = 2 * opts.capacity;
  return opts;
}
