/** The benchmarks `npm run bench` knows, in the order they run. */
export const BENCHMARKS = ['semaphore', 'step-overhead', 'step-growth', 'memory-recall', 'context-budget', 'throughput', 'overload'] as const;
/** Left out of a run that names none: each takes tens of minutes at the sizes issue 20 asks for. */
export const LONG_BENCHMARKS: readonly BenchmarkName[] = ['throughput', 'overload'];
export type BenchmarkName = (typeof BENCHMARKS)[number];

/**
 * Which benchmarks to run: `--only a,b` (or `--only=a,b`, or BENCH_ONLY=a,b), all of them by
 * default. Returns the rest of the arguments for the benchmarks' own options.
 */
export function selectBenchmarks(o: { argv: readonly string[]; env: NodeJS.ProcessEnv }): { only: BenchmarkName[]; argv: string[] } {
  const argv: string[] = [];
  let named = o.env.BENCH_ONLY || undefined;
  for (let i = 0; i < o.argv.length; i++) {
    const arg = o.argv[i]!;
    if (arg === '--only') {
      named = o.argv[++i];
      if (named === undefined) throw new RangeError('--only needs a value');
    } else if (arg.startsWith('--only=')) {
      named = arg.slice('--only='.length);
    } else {
      argv.push(arg);
    }
  }
  if (named === undefined) return { only: BENCHMARKS.filter((b) => !LONG_BENCHMARKS.includes(b)), argv };
  const only = named
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = only.find((n) => !(BENCHMARKS as readonly string[]).includes(n));
  if (unknown !== undefined || only.length === 0) throw new RangeError(`unknown benchmark "${unknown ?? named}" (known: ${BENCHMARKS.join(', ')})`);
  return { only: BENCHMARKS.filter((b) => only.includes(b)), argv };
}
