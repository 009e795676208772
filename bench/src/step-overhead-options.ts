import { applySettings, int, rejectUnknown, splitFlags, type Setting } from './bench-options.js';

/** Settings of the per-step platform overhead benchmark. */
export interface StepOverheadOptions {
  /** LLM calls per task: `steps - 1` ask for one tool call each, the last one answers. */
  steps: number;
  /** Measured tasks, run one after another. */
  tasks: number;
  /** Tasks run first and not measured (JIT, connections, KV buckets). */
  warmupTasks: number;
  /** The built-in tool each step calls. */
  tool: 'echo' | 'time_now';
  /** Also write a per-phase breakdown: the runtime's step timings and the cost of each bus hop alone. */
  breakdown: boolean;
  /** Repetitions of each bus hop measured alone for the breakdown. */
  hopIterations: number;
  /** Where step-overhead.json and step-overhead.md go. */
  resultsDir: string;
}

const bool = (name: string, v: string): boolean => {
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new RangeError(`${name} must be true or false, got "${v}"`);
};

export const stepOverheadSettings: Setting<StepOverheadOptions>[] = [
  { flag: 'steps', env: 'BENCH_STEPS', apply: (o, v) => (o.steps = int('steps', v, 2)) },
  { flag: 'tasks', env: 'BENCH_TASKS', apply: (o, v) => (o.tasks = int('tasks', v, 1)) },
  { flag: 'warmup-tasks', env: 'BENCH_WARMUP_TASKS', apply: (o, v) => (o.warmupTasks = int('warmup-tasks', v, 0)) },
  {
    flag: 'tool',
    env: 'BENCH_TOOL',
    apply: (o, v) => {
      if (v !== 'echo' && v !== 'time_now') throw new RangeError(`tool must be echo or time_now, got "${v}"`);
      o.tool = v;
    },
  },
  { flag: 'breakdown', env: 'BENCH_BREAKDOWN', apply: (o, v) => (o.breakdown = bool('breakdown', v)) },
  { flag: 'hop-iterations', env: 'BENCH_HOP_ITERATIONS', apply: (o, v) => (o.hopIterations = int('hop-iterations', v, 10)) },
  { flag: 'results-dir', env: 'BENCH_RESULTS_DIR', apply: (o, v) => (o.resultsDir = v) },
];

/** Defaults (20 steps, 10 tasks after 2 warm-up tasks, echo, with the breakdown), then env, then flags. */
export function stepOverheadOptions(o: {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  defaultResultsDir: string;
  ignore?: readonly string[];
}): StepOverheadOptions {
  const opts: StepOverheadOptions = {
    steps: 20,
    tasks: 10,
    warmupTasks: 2,
    tool: 'echo',
    breakdown: true,
    hopIterations: 300,
    resultsDir: o.defaultResultsDir,
  };
  const unknown = applySettings(opts, stepOverheadSettings, o.env, splitFlags(o.argv));
  rejectUnknown(unknown, [...stepOverheadSettings.map((s) => s.flag), ...(o.ignore ?? [])]);
  if (opts.steps > 1000) throw new RangeError('steps must be <= 1000 (a task budget allows at most 1000 steps)');
  return opts;
}
