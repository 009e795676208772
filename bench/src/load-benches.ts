import { BenchError } from './bench-errors.js';
import { runBareLoad, type BareLoadResult } from './bare-load.js';
import { runLoad, type LoadRunResult } from './load-run.js';
import { round } from './stats.js';
import type { StepTool } from './step-script.js';
import { machineOf } from './step-growth-bench.js';

/** Sizes of the throughput and overload runs; the defaults are issue 20's, `BENCH_LOAD_*` shrink them. */
export interface LoadBenchOptions {
  /** Saturation: tasks per runtime count, each `steps` LLM calls, the model answering at once. */
  saturationTasks: number;
  saturationRuntimes: number[];
  steps: number;
  tool: StepTool;
  /** In flight: this many tasks behind a cap of `capacity` at `latencyMs`. */
  inflightTasks: number;
  /** Overload: this many tasks queued behind the same cap, with default timeouts. */
  overloadTasks: number;
  capacity: number;
  latencyMs: number;
  runtimes: number;
}

export function loadBenchOptions(env: NodeJS.ProcessEnv): LoadBenchOptions {
  const int = (name: string, d: number) => {
    const v = env[name];
    if (v === undefined || v === '') return d;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, not "${v}"`);
    return n;
  };
  const tool = (env.BENCH_LOAD_TOOL ?? 'bench_record') as StepTool;
  if (!['echo', 'time_now', 'bench_record'].includes(tool)) throw new RangeError(`BENCH_LOAD_TOOL must be echo, time_now or bench_record, not "${tool}"`);
  return {
    saturationTasks: int('BENCH_LOAD_SATURATION_TASKS', 200),
    saturationRuntimes: (env.BENCH_LOAD_RUNTIMES ?? '1,2,3').split(',').map((x) => Number.parseInt(x, 10)),
    steps: int('BENCH_LOAD_STEPS', 10),
    tool,
    inflightTasks: int('BENCH_LOAD_INFLIGHT_TASKS', 10_000),
    overloadTasks: int('BENCH_LOAD_OVERLOAD_TASKS', 30_000),
    capacity: int('BENCH_LOAD_CAPACITY', 256),
    latencyMs: int('BENCH_LOAD_LATENCY_MS', 2000),
    runtimes: int('BENCH_LOAD_QUEUE_RUNTIMES', 2),
  };
}

export interface ThroughputReport {
  generated_at: string;
  machine: { cpus: number; cpu_model: string; node: string };
  goal: { inflight_ratio_of_bound_min: 0.95 };
  /** Per runtime count: Hermes at saturation against the bare loop with as many loops at once. */
  saturation: Array<{ runtimes: number; hermes: LoadRunResult; bare: BareLoadResult; steps_per_s_ratio: number; cpu_per_step_ratio: number | null }>;
  inflight: LoadRunResult;
  goal_met: boolean;
}

export async function runThroughputBench(o: LoadBenchOptions, log: (line: string) => void): Promise<ThroughputReport> {
  const saturation: ThroughputReport['saturation'] = [];
  for (const runtimes of o.saturationRuntimes) {
    log(`throughput: saturation with ${runtimes} runtime(s), ${o.saturationTasks} tasks of ${o.steps} steps (${o.tool})`);
    // A cap that does not bind: at saturation the platform's CPU, not the LLM cap, is the limit.
    const hermes = await runLoad(
      { name: `saturation-r${runtimes}`, tasks: o.saturationTasks, steps: o.steps, tool: o.tool, latencyMs: 0, capacity: 256, runtimes },
      log,
    );
    if (!hermes.template) throw new BenchError('no_template', "the runtime's first request was not recorded");
    // As many loops at once as the runtimes run jobs (RUNTIME_CONCURRENCY 8 each).
    const bare = await runBareLoad({ tasks: o.saturationTasks, steps: o.steps, tool: o.tool, concurrency: runtimes * 8, template: hermes.template });
    const total = (r: Record<string, number> | undefined) => r?.['total'];
    const h = total(hermes.cpu_ms_per_step);
    const b = total(bare.cpu_ms_per_step);
    saturation.push({
      runtimes,
      hermes: withoutTemplate(hermes),
      bare,
      steps_per_s_ratio: round(hermes.steps_per_s / bare.steps_per_s),
      cpu_per_step_ratio: h !== undefined && b ? round(h / b) : null,
    });
    log(`  ${runtimes} runtime(s): hermes ${hermes.steps_per_s} steps/s, bare ${bare.steps_per_s} steps/s; CPU per step ${h} vs ${b} ms`);
  }
  log(`throughput: ${o.inflightTasks} tasks in flight behind a cap of ${o.capacity} at ${o.latencyMs} ms`);
  const inflight = withoutTemplate(await runLoad(queueRun('inflight', o.inflightTasks, o), log));
  log(`  ${inflight.calls_per_s_steady} calls/s of ${inflight.bound_calls_per_s} (${inflight.ratio_of_bound}), max in flight ${inflight.max_in_flight}`);
  return {
    generated_at: new Date().toISOString(),
    machine: machineOf(),
    goal: { inflight_ratio_of_bound_min: 0.95 },
    saturation,
    inflight,
    goal_met: (inflight.ratio_of_bound ?? 0) >= 0.95 && !inflight.cap_exceeded && inflight.completed === o.inflightTasks,
  };
}

export interface OverloadReport {
  generated_at: string;
  machine: { cpus: number; cpu_model: string; node: string };
  run: LoadRunResult;
  /** Every task completed, none timed out, the cap held, and the memory backlog drained. */
  goal_met: boolean;
  timed_out: number;
}

export async function runOverloadBench(o: LoadBenchOptions, log: (line: string) => void): Promise<OverloadReport> {
  log(`overload: ${o.overloadTasks} tasks queued behind a cap of ${o.capacity} at ${o.latencyMs} ms, default timeouts`);
  const run = withoutTemplate(await runLoad({ ...queueRun('overload', o.overloadTasks, o), drainQuietMs: 30_000 }, log));
  const timedOut = Object.entries(run.failed)
    .filter(([k]) => k.includes('timeout'))
    .reduce((n, [, v]) => n + v, 0);
  return {
    generated_at: new Date().toISOString(),
    machine: machineOf(),
    run,
    timed_out: timedOut,
    goal_met: run.completed === o.overloadTasks && timedOut === 0 && !run.cap_exceeded && run.background_after_end.drained,
  };
}

/** Many short tasks behind the cap: one tool call and an answer each, enough runtime slots to reach the cap. */
function queueRun(name: string, tasks: number, o: LoadBenchOptions) {
  return {
    name,
    tasks,
    steps: 2,
    tool: o.tool,
    latencyMs: o.latencyMs,
    capacity: o.capacity,
    runtimes: o.runtimes,
    runtimeConcurrency: Math.ceil(o.capacity / o.runtimes),
    submitters: 200,
  };
}

const withoutTemplate = ({ template: _t, ...r }: LoadRunResult): LoadRunResult => r;

const cpuCell = (r: Record<string, number> | undefined) => (r ? `${r['total']}` : 'n/a');

export function renderThroughputMarkdown(r: ThroughputReport): string {
  const lines = [
    `# Throughput (${r.generated_at})`,
    '',
    `${r.machine.cpus} CPUs (${r.machine.cpu_model}), Node ${r.machine.node}.`,
    '',
    '## Saturation (model answers at once)',
    '',
    '| runtimes | Hermes steps/s | bare steps/s | ratio | Hermes CPU ms/step | bare CPU ms/step | CPU ratio | load at start/end |',
    '|---|---|---|---|---|---|---|---|',
    ...r.saturation.map(
      (s) =>
        `| ${s.runtimes} | ${s.hermes.steps_per_s} | ${s.bare.steps_per_s} | ${s.steps_per_s_ratio} | ${cpuCell(s.hermes.cpu_ms_per_step)} | ${cpuCell(s.bare.cpu_ms_per_step)} | ${s.cpu_per_step_ratio ?? 'n/a'} | ${s.hermes.machine.load_avg_1m_at_start}/${s.hermes.machine.load_avg_1m_at_end} |`,
    ),
    '',
    'CPU per step by process (Hermes):',
    '',
    ...r.saturation.map((s) => `- ${s.runtimes} runtime(s): ${JSON.stringify(s.hermes.cpu_ms_per_step ?? {})}`),
    '',
    `## ${r.inflight.settings.tasks} tasks in flight (cap ${r.inflight.settings.capacity}, ${r.inflight.settings.latencyMs} ms)`,
    '',
    ...queueLines(r.inflight),
    '',
    `Goal (>= 0.95 of N/L, cap held, all complete): ${r.goal_met ? 'met' : 'not met'}.`,
    '',
  ];
  return lines.join('\n');
}

export function renderOverloadMarkdown(r: OverloadReport): string {
  return [
    `# Overload (${r.generated_at})`,
    '',
    `${r.machine.cpus} CPUs (${r.machine.cpu_model}), Node ${r.machine.node}.`,
    '',
    ...queueLines(r.run),
    `| timed out | ${r.timed_out} |`,
    '',
    `Goal (all complete, none timed out, cap held, memory backlog drained): ${r.goal_met ? 'met' : 'not met'}.`,
    '',
  ].join('\n');
}

function queueLines(r: LoadRunResult): string[] {
  return [
    '| measure | value |',
    '|---|---|',
    `| tasks completed | ${r.completed} of ${r.settings.tasks} |`,
    `| failed | ${JSON.stringify(r.failed)} |`,
    `| wall | ${round(r.wall_ms / 1000, 1)} s |`,
    `| LLM calls/s (steady) | ${r.calls_per_s_steady} of ${r.bound_calls_per_s} (${r.ratio_of_bound}) |`,
    `| most calls in flight | ${r.max_in_flight} (cap ${r.settings.capacity}${r.cap_exceeded ? ', EXCEEDED' : ''}) |`,
    `| calls | ${JSON.stringify(r.calls)} |`,
    `| CPU ms per step | ${JSON.stringify(r.cpu_ms_per_step ?? {})} |`,
    `| memory calls after the last task | ${r.background_after_end.calls} over ${round(r.background_after_end.drain_ms / 1000, 1)} s${r.background_after_end.drained ? '' : ' (not drained)'} |`,
    `| load at start/end | ${r.machine.load_avg_1m_at_start}/${r.machine.load_avg_1m_at_end} |`,
  ];
}
