import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { submitTask, type Bus } from '@hermes/bus';
import { DEFAULT_TEAM, TERMINAL_EVENT_KINDS, taskEventKind, type TaskEvent } from '@hermes/contracts';
import { BenchError } from './bench-errors.js';
import { hostBenchTools } from './bench-tools.js';
import { ModelProcess, type ModelStats } from './model-process.js';
import { round } from './stats.js';
import { goalFor, type StepTool } from './step-script.js';
import { runtimeRequestShape, stackCpu, startStepStack, type RequestShape } from './step-overhead-bench.js';

/** One load run: many tasks at once through the whole Hermes, against a model that answers after `latencyMs`. */
export interface LoadRunSettings {
  name: string;
  tasks: number;
  /** LLM calls of each task's agent loop (the planning call comes on top). */
  steps: number;
  tool: StepTool;
  latencyMs: number;
  /** The pool's cluster-wide cap (`LLM_DEFAULT_CAPACITY`). */
  capacity: number;
  runtimes: number;
  /** `RUNTIME_CONCURRENCY` of each runtime (default: the service's own, 8). */
  runtimeConcurrency?: number;
  /** Submissions in flight at once from the bench. */
  submitters?: number;
  /** After the last task ended, how long to keep counting the memory service's background calls. */
  drainQuietMs?: number;
  env?: Record<string, string>;
}

export interface LoadRunResult {
  settings: LoadRunSettings;
  machine: { cpus: number; load_avg_1m_at_start: number; load_avg_1m_at_end: number };
  wall_ms: number;
  completed: number;
  /** Tasks that ended otherwise, by their error code (or kind). */
  failed: Record<string, number>;
  calls: ModelStats['calls'];
  /** Agent steps per second over the whole run. */
  steps_per_s: number;
  /** LLM calls per second in the steady middle of the run (first and last 10 % of its seconds left out). */
  calls_per_s_steady: number;
  /** What the cap allows at this latency: capacity / latency. */
  bound_calls_per_s: number | null;
  ratio_of_bound: number | null;
  max_in_flight: number;
  cap_exceeded: boolean;
  /** CPU ms per agent step of each process while the tasks ran. */
  cpu_ms_per_step: Record<string, number> | undefined;
  /** Background (memory) calls still arriving after the last task ended, and for how long. */
  background_after_end: { calls: number; drain_ms: number; drained: boolean };
  /** The runtime's first request of the first task, for a bare loop sending the same bodies. */
  template?: RequestShape;
}

/**
 * Starts a whole Hermes with `runtimes` runtime replicas, submits `tasks` tasks (each planned, then
 * `steps` LLM calls) with `submitters` submissions in flight, and follows every task's terminal
 * event on the core events subject (one subscription, not one consumer per task).
 */
export async function runLoad(s: LoadRunSettings, log: (line: string) => void): Promise<LoadRunResult> {
  const loadAtStart = os.loadavg()[0]!;
  const model = await ModelProcess.start({ steps: s.steps, tool: s.tool, latencyMs: s.latencyMs });
  const { stack, bus } = await startStepStack({
    model,
    name: `bench-${s.name}`,
    runtimeReplicas: s.runtimes,
    env: {
      AGENT_MAX_REPEATS: '100',
      LLM_DEFAULT_CAPACITY: String(s.capacity),
      ...(s.runtimeConcurrency ? { RUNTIME_CONCURRENCY: String(s.runtimeConcurrency) } : {}),
      ...s.env,
    },
  });
  const tools = s.tool === 'bench_record' ? await hostBenchTools({ natsUrl: stack.natsUrl, bus }) : undefined;
  try {
    const cpu = stackCpu(stack, model, 'bench (submitter, tool provider)');
    const ended = new Map<string, string>();
    const sub = followTerminalEvents(bus, ended);
    await bus.flush();
    const stamp = `${s.name}-${Date.now().toString(36)}`;
    const started = performance.now();
    cpu.start();
    const ids = await submitAll(bus, s, stamp, log);
    await waitForEnds(ended, ids, s, started, log);
    cpu.stop();
    const wallMs = performance.now() - started;
    const atEnd = await model.stats();
    const template = await runtimeRequestShape(model, `${stamp}-0`).catch(() => undefined);
    const background = await drainBackground(model, atEnd, s.drainQuietMs ?? 10_000);
    sub.unsubscribe();
    const failed: Record<string, number> = {};
    let completed = 0;
    for (const id of ids) {
      const outcome = ended.get(id) ?? 'no terminal event';
      if (outcome === 'completed') completed++;
      else failed[outcome] = (failed[outcome] ?? 0) + 1;
    }
    const stepCount = atEnd.calls.step;
    const bound = s.latencyMs > 0 ? (s.capacity / s.latencyMs) * 1000 : null;
    const steady = steadyRate(atEnd.per_second);
    return {
      settings: s,
      machine: { cpus: os.cpus().length, load_avg_1m_at_start: round(loadAtStart, 2), load_avg_1m_at_end: round(os.loadavg()[0]!, 2) },
      wall_ms: round(wallMs, 0),
      completed,
      failed,
      calls: atEnd.calls,
      steps_per_s: round((stepCount / wallMs) * 1000, 1),
      calls_per_s_steady: round(steady, 1),
      bound_calls_per_s: bound === null ? null : round(bound, 1),
      ratio_of_bound: bound === null ? null : round(steady / bound, 3),
      max_in_flight: atEnd.max_in_flight,
      cap_exceeded: atEnd.max_in_flight > s.capacity,
      cpu_ms_per_step: cpu.per(Math.max(1, stepCount)),
      background_after_end: background,
      ...(template ? { template } : {}),
    };
  } finally {
    await tools?.stop();
    await bus.drain().catch(() => {});
    await stack.stop();
    await model.stop();
  }
}

function followTerminalEvents(bus: Bus, ended: Map<string, string>) {
  return bus.subscribe(bus.subjects.taskEventsAll, (msg) => {
    const event = msg.json<TaskEvent>();
    const kind = taskEventKind(event);
    if (!TERMINAL_EVENT_KINDS.includes(kind) || ended.has(event.subject)) return;
    const code = kind === 'failed' ? (event.data as { error?: { code?: string } }).error?.code : undefined;
    ended.set(event.subject, kind === 'completed' ? 'completed' : `${kind}${code ? `:${code}` : ''}`);
  });
}

async function submitAll(bus: Bus, s: LoadRunSettings, stamp: string, log: (line: string) => void): Promise<string[]> {
  const ids: string[] = new Array(s.tasks);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < s.tasks; i = next++) {
      const runId = `${stamp}-${i}`;
      const { taskId } = await submitTask(
        bus,
        { user_id: `load${i % 50}`, goal: goalFor(runId, s.steps), budget: { max_steps: s.steps } },
        { team: DEFAULT_TEAM, source: `/bench/${s.name}`, id: runId },
      );
      ids[i] = taskId;
    }
  };
  await Promise.all(Array.from({ length: Math.min(s.submitters ?? 100, s.tasks) }, worker));
  log(`  ${s.name}: ${s.tasks} tasks submitted`);
  return ids;
}

async function waitForEnds(ended: Map<string, string>, ids: string[], s: LoadRunSettings, started: number, log: (line: string) => void): Promise<void> {
  // Generous: the cap bounds the run at tasks × (steps + 1) / (capacity / latency); CPU on a small
  // machine can make it several times that, and a stuck task should fail the bench, not hang it.
  const callsNeeded = s.tasks * (s.steps + 1);
  const lowerBoundMs = s.latencyMs > 0 ? (callsNeeded / s.capacity) * s.latencyMs : 0;
  const deadline = started + 5 * lowerBoundMs + s.tasks * 100 + 300_000;
  let lastReport = performance.now();
  for (;;) {
    const done = ids.filter((id) => ended.has(id)).length;
    if (done === ids.length) return;
    if (performance.now() > deadline)
      throw new BenchError('load_timeout', `${s.name}: ${ids.length - done} of ${ids.length} tasks had not ended by the deadline`);
    if (performance.now() - lastReport > 30_000) {
      log(`  ${s.name}: ${done}/${ids.length} ended after ${round((performance.now() - started) / 1000, 0)} s`);
      lastReport = performance.now();
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Counts the background calls that keep arriving once every task ended, until none came for `quietMs`. */
async function drainBackground(model: ModelProcess, atEnd: ModelStats, quietMs: number) {
  const started = performance.now();
  let last = atEnd.calls.background;
  let lastChange = started;
  // At most 10 minutes: a backlog longer than that is reported as not drained.
  while (performance.now() - lastChange < quietMs && performance.now() - started < 600_000) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = (await model.stats()).calls.background;
    if (now !== last) {
      last = now;
      lastChange = performance.now();
    }
  }
  return { calls: last - atEnd.calls.background, drain_ms: round(lastChange - started, 0), drained: performance.now() - lastChange >= quietMs };
}

/** Mean calls per second over the run's seconds, leaving out the ramp-up and ramp-down tenths. */
export function steadyRate(perSecond: ReadonlyArray<[number, number]>): number {
  if (perSecond.length === 0) return 0;
  const first = perSecond[0]![0];
  const last = perSecond.at(-1)![0];
  const counts = new Map(perSecond);
  const seconds = Array.from({ length: last - first + 1 }, (_, i) => counts.get(first + i) ?? 0);
  const cut = Math.floor(seconds.length / 10);
  const middle = seconds.slice(cut, seconds.length - cut);
  return middle.reduce((a, b) => a + b, 0) / Math.max(1, middle.length);
}
