import os from 'node:os';
import { undiciFetch } from '@hermes/llm';
import { hostBenchTools } from './bench-tools.js';
import { checkpointWriteCost, type CheckpointWriteCost } from './checkpoint-write-cost.js';
import { DirectAgent } from './direct-agent.js';
import { ModelProcess } from './model-process.js';
import { ProcessCpu } from './process-cpu.js';
import { round, summarise } from './stats.js';
import { runDirectTask, runHermesTask, runtimeRequestShape, stackCpu, startStepStack, type TaskRun } from './step-overhead-bench.js';

/** Goals of issue 20 for the default path with a side-effecting tool, and for growth. */
export const GROWTH_GOAL = { time_ratio_p50_max: 1.5, cpu_ratio_max: 2, flat_within: 0.2 } as const;

/** Settings of the step-cost benchmark: the default path with a side-effecting tool, then tasks of growing length. */
export interface StepGrowthOptions {
  /** LLM calls of a task on the default path. */
  steps: number;
  /** Measured default-path tasks per side (after one warm-up each). */
  tasks: number;
  /** Task lengths (LLM calls) of the growth run. */
  lengths: number[];
  /** Tool-result paddings (bytes) of the growth run. */
  padBytes: number[];
}

export interface SideFigures {
  ms_per_step_p50: number;
  ms_per_step_mean: number;
  cpu_ms_per_step: Record<string, number> | undefined;
}

export interface Comparison {
  hermes: SideFigures;
  direct: SideFigures;
  /** Hermes p50 / direct p50, per step. */
  time_ratio_p50: number;
  /** Hermes CPU / direct CPU, per step, all processes. */
  cpu_ratio: number | undefined;
}

export interface GrowthRow extends Comparison {
  steps: number;
  pad_bytes: number;
  /**
   * The direct loop with the SDK on Hermes's HTTP client (undici `request`): with multi-megabyte
   * bodies the stock SDK's fetch costs more than the rest of a step, so what the platform adds is
   * measured against this one.
   */
  direct_same_client: SideFigures;
  /** Hermes − direct on the same HTTP client, mean ms per step: what the platform adds at this length. */
  overhead_ms_per_step_mean: number;
  /** Hermes − direct on the same HTTP client, CPU ms per step (all processes). */
  overhead_cpu_ms_per_step: number | undefined;
  /** The task's checkpoint records as stored at its end: the head, and the turn records (one per step). */
  checkpoint: { head_bytes: number; turn_records: number; turn_bytes_mean: number; turn_bytes_max: number; total_bytes: number };
  /** The checkpoint write of this task's last step alone, as the release before wrote it and as this one does. */
  checkpoint_write: CheckpointWriteCost;
}

export interface StepGrowthReport {
  generated_at: string;
  machine: ReturnType<typeof machineOf> & { load_avg_1m_at_start: number; load_avg_1m_at_end: number };
  settings: StepGrowthOptions & { plan_mode: 'auto'; tool: 'bench_record'; idempotent: false; llm_latency_ms: 0 };
  goal: typeof GROWTH_GOAL;
  default_path: Comparison & { steps: number; tasks: number; samples: number; tool_runs: number; tool_calls_expected: number };
  growth: GrowthRow[];
  errors: string[];
}

/**
 * Runs tasks through the whole Hermes on the path users run (PLAN_MODE=auto, a side-effecting
 * tool hosted with the tool SDK) beside the same loop made directly with the openai SDK, one
 * after the other against the same model process: first `tasks` tasks of `steps` calls, then one
 * task per side for every length and result size of the growth run, with the CPU of every process.
 */
export async function runStepGrowthBench(o: StepGrowthOptions, log: (line: string) => void): Promise<StepGrowthReport> {
  const loadAtStart = os.loadavg()[0]!;
  log('step growth: starting the scripted model, nats-server, redis-server and the five services');
  const model = await ModelProcess.start({ steps: o.steps, tool: 'bench_record' });
  // PLAN_MODE is left at its default (auto). A 20 KB result reaches the model whole (the default cut is 16,000 characters).
  const { stack, bus } = await startStepStack({
    model,
    name: 'bench-step-growth',
    env: { AGENT_MAX_REPEATS: '1000' },
    serviceEnv: { toolbus: { TOOL_RESULT_MAX_CHARS: '70000' } },
  });
  const tools = await hostBenchTools({ natsUrl: stack.natsUrl, bus });
  const stamp = Date.now().toString(36);
  const errors: string[] = [];
  try {
    const hermesCpu = () => stackCpu(stack, model, 'bench (submitter, tool provider)');
    const directCpu = () => new ProcessCpu(() => ({ model: model.pid }), 'bench (direct loop)');
    const hermesTask = (runId: string, steps: number, padBytes: number) =>
      runHermesTask({ bus, model, runId, steps, padBytes, timeoutMs: 600_000 }).catch((err: unknown) => {
        // What the services said about it: the reason is in their logs, not in the step count.
        const said = [...stack.services].flatMap(([name, svc]) => svc.logs.slice(-8).map((l) => `${name}: ${l}`));
        throw new Error(`${(err as Error).message}\n${said.join('\n')}`, { cause: err });
      });
    await hermesTask(`${stamp}-hw`, o.steps, 0);
    const template = await runtimeRequestShape(model, `${stamp}-hw`);
    const direct = new DirectAgent(model.baseUrl);
    const directTask = (runId: string, steps: number, padBytes: number) =>
      runDirectTask({ direct, model, runId, steps, padBytes, template, tool: 'bench_record' });
    await directTask(`${stamp}-dw`, o.steps, 0);
    const sameClient = new DirectAgent(model.baseUrl, undiciFetch());
    const sameClientTask = (runId: string, steps: number, padBytes: number) =>
      runDirectTask({ direct: sameClient, model, runId, steps, padBytes, template, tool: 'bench_record' });
    await sameClientTask(`${stamp}-uw`, o.steps, 0);
    const checkpoints = await bus.kv('checkpoints');

    /** Runs `n` tasks per side, alternating, and compares them. */
    const compare = async (label: string, steps: number, padBytes: number, n: number) => {
      const hc = hermesCpu();
      const dc = directCpu();
      const h: TaskRun[] = [];
      const d: TaskRun[] = [];
      for (let i = 0; i < n; i++) {
        hc.start();
        h.push(await hermesTask(`${stamp}-${label}-h${i}`, steps, padBytes));
        hc.stop();
        dc.start();
        d.push(await directTask(`${stamp}-${label}-d${i}`, steps, padBytes));
        dc.stop();
      }
      const samples = n * (steps - 1);
      const c = comparison(h, d, hc.per(samples), dc.per(samples));
      log(
        `  ${label}: hermes ${c.hermes.ms_per_step_p50} ms/step p50, direct ${c.direct.ms_per_step_p50}; ratio ${c.time_ratio_p50}, cpu ratio ${c.cpu_ratio ?? '–'}`,
      );
      return { c, samples, taskIds: h.map((t) => t.taskId!) };
    };
    /** One task on the direct loop with Hermes's HTTP client, with its CPU. */
    const sameClientRun = async (label: string, steps: number, padBytes: number): Promise<SideFigures> => {
      const uc = directCpu();
      uc.start();
      const u = await sameClientTask(`${stamp}-${label}-u`, steps, padBytes);
      uc.stop();
      return sideFigures([u], uc.per(steps - 1));
    };
    /** The sizes of a task's checkpoint records (its one job's keys start with the task id). */
    const checkpointOf = async (taskId: string): Promise<GrowthRow['checkpoint']> => {
      // Job ids are `<task id>-<subtask>-<attempt>`; a head is `job.<job id>`, a turn `job.<job id>.<writer>.<n>`.
      const prefix = `job.${taskId.replace(/[^A-Za-z0-9_=-]/g, '_')}-`;
      let head = 0;
      const turns: number[] = [];
      for await (const key of await checkpoints.keys('job.>')) {
        if (!key.startsWith(prefix)) continue;
        const size = (await checkpoints.get(key))?.length ?? 0;
        if (key.split('.').length === 2) head = size;
        else turns.push(size);
      }
      const total = turns.reduce((a, b) => a + b, 0);
      return {
        head_bytes: head,
        turn_records: turns.length,
        turn_bytes_mean: turns.length ? Math.round(total / turns.length) : 0,
        turn_bytes_max: Math.max(0, ...turns),
        total_bytes: total + head,
      };
    };

    const runsBefore = tools.runs();
    const { c: base, samples } = await compare('default', o.steps, 0, o.tasks);
    const defaultPath = {
      ...base,
      steps: o.steps,
      tasks: o.tasks,
      samples,
      tool_runs: tools.runs() - runsBefore,
      tool_calls_expected: o.tasks * (o.steps - 1),
    };
    const growth: GrowthRow[] = [];
    for (const padBytes of o.padBytes) {
      for (const steps of o.lengths) {
        const label = `g${steps}x${padBytes}`;
        const { c, taskIds } = await compare(label, steps, padBytes, 1);
        const u = await sameClientRun(label, steps, padBytes);
        const hCpu = c.hermes.cpu_ms_per_step?.total;
        const uCpu = u.cpu_ms_per_step?.total;
        growth.push({
          steps,
          pad_bytes: padBytes,
          ...c,
          direct_same_client: u,
          overhead_ms_per_step_mean: round(c.hermes.ms_per_step_mean - u.ms_per_step_mean),
          overhead_cpu_ms_per_step: hCpu !== undefined && uCpu !== undefined ? round(hCpu - uCpu) : undefined,
          checkpoint: await checkpointOf(taskIds[0]!),
          checkpoint_write: await checkpointWriteCost({ kv: checkpoints, natsPid: stack.nats?.pid, steps, padBytes, label }),
        });
      }
    }
    return {
      generated_at: new Date().toISOString(),
      machine: { ...machineOf(), load_avg_1m_at_start: round(loadAtStart, 2), load_avg_1m_at_end: round(os.loadavg()[0]!, 2) },
      settings: { ...o, plan_mode: 'auto', tool: 'bench_record', idempotent: false, llm_latency_ms: 0 },
      goal: GROWTH_GOAL,
      default_path: defaultPath,
      growth,
      errors,
    };
  } finally {
    await tools.stop().catch(() => {});
    await bus.drain().catch(() => {});
    await stack.stop();
    await model.stop();
  }
}

/** The machine a report was measured on. */
export function machineOf(): { cpus: number; cpu_model: string; node: string } {
  const cpus = os.cpus();
  return { cpus: cpus.length, cpu_model: cpus[0]?.model ?? 'unknown', node: process.version };
}

function sideFigures(runs: TaskRun[], cpu: Record<string, number> | undefined): SideFigures {
  const steps = runs.flatMap((t) => t.stepMs);
  return { ms_per_step_p50: summarise(steps).p50_ms, ms_per_step_mean: round(steps.reduce((a, b) => a + b, 0) / steps.length), cpu_ms_per_step: cpu };
}

function comparison(h: TaskRun[], d: TaskRun[], hCpu: Record<string, number> | undefined, dCpu: Record<string, number> | undefined): Comparison {
  const hermes = sideFigures(h, hCpu);
  const direct = sideFigures(d, dCpu);
  return {
    hermes,
    direct,
    time_ratio_p50: round(hermes.ms_per_step_p50 / direct.ms_per_step_p50, 2),
    cpu_ratio: hCpu?.total !== undefined && dCpu?.total ? round(hCpu.total / dCpu.total, 2) : undefined,
  };
}
