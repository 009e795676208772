import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { Bus, followTaskEvents, submitTask } from '@hermes/bus';
import { DEFAULT_TEAM, taskEventData, taskEventKind } from '@hermes/contracts';
import { startHermesStack } from '@hermes/devstack';
import { undiciFetch } from '@hermes/llm';
import { createLogger } from '@hermes/telemetry';
import { ProcessCpu } from './process-cpu.js';
import { BenchError } from './bench-errors.js';
import { DirectAgent } from './direct-agent.js';
import { round, summarise } from './stats.js';
import { ModelProcess } from './model-process.js';
import { goalFor, intervals, type StepTool } from './step-script.js';
import type { StepOverheadOptions } from './step-overhead-options.js';
import { measureBreakdown, type StepBreakdown } from './step-breakdown.js';

/** The most the platform may add to one agent step at the median. */
export const STEP_GOAL = { overhead_ms_per_step_p50_max: 3 } as const;

const MODEL = 'scripted-demo';
const USER = 'bench';

/** One task, as measured: its LLM requests' arrival gaps are its steps. */
export interface TaskRun {
  runId: string;
  /** Hermes only: the task id. */
  taskId?: string;
  llmCalls: number;
  /** When each LLM request reached the model (epoch ms, sub-ms precision). */
  arrivals: number[];
  /** Gaps between consecutive LLM requests reaching the scripted model: one per step with a tool call. */
  stepMs: number[];
  /** Submit (or first call, for direct) to the answer. */
  taskMs: number;
  /** Hermes only: gaps between consecutive `llm_call` step events reaching the submitter. */
  eventStepMs?: number[];
  /** Direct only: client-side duration of each LLM call, and when it began (epoch ms). */
  callMs?: number[];
  callStartedAt?: number[];
}

export interface StepOverheadReport {
  generated_at: string;
  machine: { cpus: number; cpu_model: string; node: string; platform: string; load_avg_1m_at_start: number; load_avg_1m_at_end: number };
  settings: { steps: number; tasks: number; warmup_tasks: number; tool: string; llm_latency_ms: 0; interleaved: true };
  goal: typeof STEP_GOAL;
  /** LLM calls per task (the last one answers). */
  steps: number;
  /** Measured tasks per side. */
  tasks: number;
  /** Step samples per side: (steps - 1) per task. */
  samples: number;
  hermes_ms_per_step_p50: number;
  hermes_ms_per_step_p99: number;
  hermes_ms_per_step_mean: number;
  direct_ms_per_step_p50: number;
  direct_ms_per_step_p99: number;
  direct_ms_per_step_mean: number;
  overhead_ms_per_step_p50: number;
  overhead_ms_per_step_mean: number;
  goal_met: boolean;
  hermes: {
    /** Mean ms per step of each measured task, in order. */
    per_task_ms_per_step: number[];
    /** The same steps seen from the submitter: gaps between `llm_call` step events. */
    from_step_events_p50_ms: number;
    from_step_events_p99_ms: number;
    task_ms_p50: number;
    /** Submit → completed, minus the steps: intake, dispatch, start, tools list, session read and write, result. */
    fixed_ms_per_task_p50: number;
  };
  direct: {
    per_task_ms_per_step: number[];
    llm_call_ms_p50: number;
    task_ms_p50: number;
  };
  /**
   * The direct loop again, with the SDK on the HTTP client Hermes's LLM client uses (undici's
   * `request`, `LLM_HTTP_CLIENT=undici`) instead of the one it ships with: what is left of the
   * overhead once the cheaper client Hermes picked is taken out of the comparison.
   */
  direct_same_http_client: {
    ms_per_step_p50: number;
    per_task_ms_per_step: number[];
    overhead_ms_per_step_p50: number;
  };
  /**
   * CPU time per step of each process while the measured tasks ran (their per-task work included),
   * from /proc: on a small machine every process of a step competes for the same cores.
   */
  cpu_ms_per_step?: { hermes: Record<string, number>; direct: Record<string, number> };
  breakdown?: StepBreakdown;
  errors: string[];
}

interface CpuPerStep {
  hermes: Record<string, number> | undefined;
  direct: Record<string, number> | undefined;
}

/**
 * Starts the whole Hermes (nats-server, redis-server, five services as processes) against a
 * scripted model (a process of its own) that answers at once, then runs tasks of `steps` LLM calls (each but the last
 * asking for one tool call) through it, alternating with the same loop made directly with the
 * openai SDK and a local function. The difference per step is what the platform costs.
 */
export async function runStepOverheadBench(o: StepOverheadOptions, log: (line: string) => void): Promise<StepOverheadReport> {
  const loadAtStart = os.loadavg()[0]!;
  log('step overhead: starting the scripted model (its own process), nats-server, redis-server and the five services');
  const model = await ModelProcess.start({ steps: o.steps, tool: o.tool });
  // The default PLAN_MODE (auto), as users run it: each task is planned, then its one subtask
  // loops. Steps are measured inside the loop; the planning call is a per-task cost.
  const { stack, bus } = await startStepStack({ model, name: 'bench-step-overhead', env: { AGENT_MAX_REPEATS: '100' } });
  const stamp = Date.now().toString(36);
  const errors: string[] = [];
  try {
    const hermesCpu = stackCpu(stack, model, 'bench (submitter)');
    const directCpu = new ProcessCpu(() => ({ model: model.pid }), 'bench (direct loop)');
    const hermesTask = (runId: string) => runHermesTask({ bus, model, runId, steps: o.steps });
    // The direct loop sends what the runtime sent: its system prompt (for this run's goal) and tool list.
    const first = await hermesTask(`${stamp}-h-w0`);
    const template = await runtimeRequestShape(model, `${stamp}-h-w0`);
    const direct = new DirectAgent(model.baseUrl);
    const directTask = (runId: string) => runDirectTask({ direct, model, runId, steps: o.steps, template, tool: o.tool });
    const sameClient = new DirectAgent(model.baseUrl, undiciFetch());
    const sameClientTask = (runId: string) => runDirectTask({ direct: sameClient, model, runId, steps: o.steps, template, tool: o.tool });
    await directTask(`${stamp}-d-w0`);
    await sameClientTask(`${stamp}-u-w0`);
    log(`  warm-up: hermes ${round(mean(first.stepMs), 2)} ms/step`);
    for (let i = 1; i < o.warmupTasks; i++) {
      await hermesTask(`${stamp}-h-w${i}`);
      await directTask(`${stamp}-d-w${i}`);
      await sameClientTask(`${stamp}-u-w${i}`);
    }
    const hermes: TaskRun[] = [];
    const directRuns: TaskRun[] = [];
    const sameClientRuns: TaskRun[] = [];
    // Alternating, so a burst of load from elsewhere on the machine hits both sides alike.
    for (let i = 0; i < o.tasks; i++) {
      hermesCpu.start();
      const h = await hermesTask(`${stamp}-h${i}`);
      hermesCpu.stop();
      directCpu.start();
      const d = await directTask(`${stamp}-d${i}`);
      directCpu.stop();
      sameClientRuns.push(await sameClientTask(`${stamp}-u${i}`));
      hermes.push(h);
      directRuns.push(d);
      log(
        `  task ${i + 1}/${o.tasks}: hermes ${round(mean(h.stepMs), 2)} ms/step, direct ${round(mean(d.stepMs), 2)} ms/step, direct on undici ${round(mean(sameClientRuns.at(-1)!.stepMs), 2)} ms/step`,
      );
    }
    const breakdown = o.breakdown ? await measureBreakdown({ stack, bus, options: o, stamp, log, hermesTask, directTask }) : undefined;
    const steps = o.tasks * (o.steps - 1);
    return report(o, { hermes, direct: directRuns, sameClient: sameClientRuns }, loadAtStart, breakdown, errors, {
      hermes: hermesCpu.per(steps),
      direct: directCpu.per(steps),
    });
  } finally {
    await bus.drain().catch(() => {});
    await stack.stop();
    await model.stop();
  }
}

/**
 * The whole Hermes against the bench's model process, and a bus client on it: the stack every
 * step benchmark measures (`env` and `serviceEnv` over quiet logs and no LLM retries).
 */
export async function startStepStack(o: {
  model: ModelProcess;
  name: string;
  env?: Record<string, string>;
  serviceEnv?: NonNullable<Parameters<typeof startHermesStack>[0]>['serviceEnv'];
  runtimeReplicas?: number;
}): Promise<{ stack: Awaited<ReturnType<typeof startHermesStack>>; bus: Bus }> {
  const stack = await startHermesStack({
    apiKeys: [{ key: 'bench-key-0123456789abcdef', user_id: USER, roles: ['user'] }],
    openai: { baseUrl: o.model.baseUrl, apiKey: 'scripted', model: MODEL },
    env: { LOG_LEVEL: 'warn', LLM_MAX_RETRIES: '0', SHUTDOWN_TIMEOUT_MS: '3000', ...o.env },
    ...(o.serviceEnv ? { serviceEnv: o.serviceEnv } : {}),
    ...(o.runtimeReplicas ? { runtimeReplicas: o.runtimeReplicas } : {}),
  }).catch(async (err: unknown) => {
    await o.model.stop();
    throw err;
  });
  const bus = await Bus.connect({
    servers: stack.natsUrl,
    name: o.name,
    logger: createLogger({ service: 'bench', level: 'silent' }),
    waitOnFirstConnect: false,
  });
  return { stack, bus };
}

/** CPU of every Hermes process, nats-server, redis-server and the model; `self` names the bench's own share. */
export function stackCpu(stack: Awaited<ReturnType<typeof startHermesStack>>, model: ModelProcess, self: string): ProcessCpu {
  return new ProcessCpu(
    () => ({
      ...Object.fromEntries([...stack.services].map(([name, svc]) => [name, svc.pid])),
      ...(stack.nats ? { 'nats-server': stack.nats.pid } : {}),
      ...(stack.redis ? { 'redis-server': stack.redis.pid } : {}),
      model: model.pid,
    }),
    self,
  );
}

/** What the runtime's first request of a task looked like, to replay in the direct loop. */
export interface RequestShape {
  system: string;
  tools: ChatCompletionTool[];
  /** The run id inside the system prompt, replaced per direct task. */
  runId: string;
}

export async function runtimeRequestShape(model: ModelProcess, runId: string): Promise<RequestShape> {
  const body = await model.firstRequestOf(runId);
  const system = body?.messages?.[0];
  if (!body || system?.role !== 'system' || typeof system.content !== 'string')
    throw new BenchError('no_template', "the runtime's request for the warm-up task was not recorded");
  return { system: system.content, tools: (body.tools ?? []) as ChatCompletionTool[], runId };
}

export async function runHermesTask(o: {
  bus: Bus;
  model: ModelProcess;
  runId: string;
  steps: number;
  padBytes?: number;
  timeoutMs?: number;
}): Promise<TaskRun> {
  const started = performance.now();
  const { taskId } = await submitTask(
    o.bus,
    { user_id: USER, goal: goalFor(o.runId, o.steps, o.padBytes), budget: { max_steps: o.steps } },
    { team: DEFAULT_TEAM, source: '/bench/step-overhead', id: o.runId },
  );
  const llmEvents: number[] = [];
  let outcome: { kind: string; detail: string } | undefined;
  const signal = AbortSignal.timeout(o.timeoutMs ?? 120_000);
  for await (const { event } of followTaskEvents(o.bus, { team: DEFAULT_TEAM, task_id: taskId }, { signal })) {
    const kind = taskEventKind(event);
    const step = kind === 'step' ? taskEventData(event, 'step') : undefined;
    if (step?.kind === 'llm_call' && step.subtask_id !== 'plan') llmEvents.push(performance.now());
    if (kind === 'completed') outcome = { kind, detail: taskEventData(event, 'completed')?.result.output ?? '' };
    if (kind === 'failed' || kind === 'rejected') outcome = { kind, detail: JSON.stringify(event.data) };
  }
  const taskMs = performance.now() - started;
  if (outcome?.kind !== 'completed')
    throw new BenchError(
      'task_failed',
      `task ${o.runId} (${taskId}) ended ${outcome ? `${outcome.kind}: ${outcome.detail}` : 'without a terminal event (timeout)'}`,
    );
  const arrivals = await o.model.arrivalsOf(o.runId);
  return checked(
    { runId: o.runId, taskId, llmCalls: arrivals.length, arrivals, stepMs: intervals(arrivals), taskMs, eventStepMs: intervals(llmEvents) },
    o.steps,
  );
}

export async function runDirectTask(o: {
  direct: DirectAgent;
  model: ModelProcess;
  runId: string;
  steps: number;
  padBytes?: number;
  template: RequestShape;
  tool: StepTool;
}): Promise<TaskRun> {
  const goal = goalFor(o.runId, o.steps, o.padBytes);
  const started = performance.now();
  const r = await o.direct.run({
    system: o.template.system.split(o.template.runId).join(o.runId),
    goal,
    tools: o.template.tools,
    model: MODEL,
    tool: o.tool,
    maxCalls: o.steps + 1,
  });
  const taskMs = performance.now() - started;
  const arrivals = await o.model.arrivalsOf(o.runId);
  if (arrivals.length !== r.llmCalls)
    throw new BenchError('wrong_step_count', `direct task ${o.runId}: ${r.llmCalls} calls made, ${arrivals.length} seen by the model`);
  return checked(
    { runId: o.runId, llmCalls: r.llmCalls, arrivals, stepMs: intervals(arrivals), taskMs, callMs: r.callMs, callStartedAt: r.callStartedAt },
    o.steps,
  );
}

function checked(run: TaskRun, steps: number): TaskRun {
  if (run.llmCalls !== steps || run.stepMs.length !== steps - 1) {
    throw new BenchError(
      'wrong_step_count',
      `task ${run.runId} made ${run.llmCalls} LLM calls (${run.stepMs.length + 1} seen by the model); expected ${steps}`,
    );
  }
  return run;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);

function report(
  o: StepOverheadOptions,
  { hermes, direct, sameClient }: { hermes: TaskRun[]; direct: TaskRun[]; sameClient: TaskRun[] },
  loadAtStart: number,
  breakdown: StepBreakdown | undefined,
  errors: string[],
  cpu: CpuPerStep,
): StepOverheadReport {
  const h = summarise(hermes.flatMap((t) => t.stepMs));
  const u = summarise(sameClient.flatMap((t) => t.stepMs));
  const d = summarise(direct.flatMap((t) => t.stepMs));
  const hMean = mean(hermes.flatMap((t) => t.stepMs));
  const dMean = mean(direct.flatMap((t) => t.stepMs));
  const ev = summarise(hermes.flatMap((t) => t.eventStepMs ?? []));
  const taskH = summarise(hermes.map((t) => t.taskMs));
  const fixed = summarise(hermes.map((t) => t.taskMs - t.stepMs.reduce((a, b) => a + b, 0)));
  const overhead = round(h.p50_ms - d.p50_ms);
  return {
    generated_at: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      load_avg_1m_at_start: round(loadAtStart, 2),
      load_avg_1m_at_end: round(os.loadavg()[0]!, 2),
    },
    settings: { steps: o.steps, tasks: o.tasks, warmup_tasks: o.warmupTasks, tool: o.tool, llm_latency_ms: 0, interleaved: true },
    goal: STEP_GOAL,
    steps: o.steps,
    tasks: o.tasks,
    samples: h.samples,
    hermes_ms_per_step_p50: h.p50_ms,
    hermes_ms_per_step_p99: h.p99_ms,
    hermes_ms_per_step_mean: round(hMean),
    direct_ms_per_step_p50: d.p50_ms,
    direct_ms_per_step_p99: d.p99_ms,
    direct_ms_per_step_mean: round(dMean),
    overhead_ms_per_step_p50: overhead,
    overhead_ms_per_step_mean: round(hMean - dMean),
    goal_met: overhead <= STEP_GOAL.overhead_ms_per_step_p50_max,
    hermes: {
      per_task_ms_per_step: hermes.map((t) => round(mean(t.stepMs))),
      from_step_events_p50_ms: ev.p50_ms,
      from_step_events_p99_ms: ev.p99_ms,
      task_ms_p50: taskH.p50_ms,
      fixed_ms_per_task_p50: fixed.p50_ms,
    },
    direct: {
      per_task_ms_per_step: direct.map((t) => round(mean(t.stepMs))),
      llm_call_ms_p50: summarise(direct.flatMap((t) => t.callMs ?? [])).p50_ms,
      task_ms_p50: summarise(direct.map((t) => t.taskMs)).p50_ms,
    },
    direct_same_http_client: {
      ms_per_step_p50: u.p50_ms,
      per_task_ms_per_step: sameClient.map((t) => round(mean(t.stepMs))),
      overhead_ms_per_step_p50: round(h.p50_ms - u.p50_ms),
    },
    ...(cpu.hermes && cpu.direct ? { cpu_ms_per_step: { hermes: cpu.hermes, direct: cpu.direct } } : {}),
    ...(breakdown ? { breakdown } : {}),
    errors,
  };
}
