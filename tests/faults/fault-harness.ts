import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { submitTask } from '@hermes/bus';
import { DEFAULT_TEAM, taskEventData, taskEventKind, type TaskEvent } from '@hermes/contracts';
import type { RecordedRequest, ScriptedResponse } from '@hermes/testkit';
import { goalOf, toolMessages } from '../e2e/model-script.js';
import type { Stack } from '../e2e/stack.js';
import { watchTask } from '../e2e/tasks.js';
import { auditRecords, type Ledger } from '../e2e/tool-fixtures.js';

/** How big a fault run is: the size (`full`, `npm run test:faults`) or one that fits the CI suite. */
export interface FaultScale {
  tasks: number;
  callsPerTask: number;
  /** Model latency per answer, ms, drawn uniformly. */
  latencyMs: [number, number];
}

export const SCALES: Record<'ci' | 'full', FaultScale> = {
  ci: { tasks: 8, callsPerTask: 3, latencyMs: [150, 300] },
  full: { tasks: 40, callsPerTask: 5, latencyMs: [200, 500] },
};

export function faultScale(): FaultScale {
  return process.env.FAULT_SCALE === 'full' ? SCALES.full : SCALES.ci;
}

/** What one fault run measured. */
export interface FaultReport {
  scenario: string;
  tasks: number;
  calls_per_task: number;
  completed: number;
  failed: string[];
  stuck: number;
  /** Side effects written more than once under one idempotency key. */
  duplicate_keys: number;
  /** Completed tasks whose effects are not exactly one per step. */
  wrong_effect_counts: number;
  /** Tool calls answered with an error (the model read it as a failed step), by code, from the toolbus audit. */
  tool_errors: Record<string, number>;
  /**
   * LLM answers of a step asked for again: the answer never reached a checkpoint (the process that
   * asked was killed or paused past its ack wait with the call in flight, or its write failed).
   */
  reasked_steps: number;
  /** Steps asked for again after a later step of the task had been asked: a checkpointed answer lost or overrun. */
  reasked_after_checkpoint: number;
  /** Longest pause between two side effects from the fault on: what the fault cost the run. */
  stall_ms: number;
  /** From the fault to the first side effect after it. */
  recovery_ms: number;
  /** From the fault to the last side effect. */
  last_effect_ms: number;
  duration_ms: number;
}

/**
 * The model of a fault run: each task calls `ledger_append` once per step, `callsPerTask` times,
 * then answers. `varying`: the arguments carry a fresh nonce on every request, as a real model
 * answering the same question again would differ, so a re-asked step that ran its tool again
 * under a new key would show as an extra effect.
 */
export class FaultModel {
  private readonly asked = new Map<string, number>();
  /** Per goal, the most tool results a request carried so far: a step below it was checkpointed. */
  private readonly furthest = new Map<string, number>();
  /** Goals with a step asked for after a later step had been asked: that step's checkpoint was lost. */
  private readonly behind: string[] = [];

  /** `tool`: the side-effecting tool the model calls (default the e2e provider's `ledger_append`), with extra arguments. */
  constructor(private readonly o: { scale: FaultScale; varying: boolean; tool?: { name: string; args?: Record<string, unknown> } }) {}

  answer(req: RecordedRequest): ScriptedResponse {
    const goal = goalOf(req.body) ?? '';
    const done = toolMessages(req.body).length;
    const key = `${goal}#${done}`;
    this.asked.set(key, (this.asked.get(key) ?? 0) + 1);
    if (done < (this.furthest.get(goal) ?? -1)) this.behind.push(goal);
    this.furthest.set(goal, Math.max(done, this.furthest.get(goal) ?? -1));
    const [lo, hi] = this.o.scale.latencyMs;
    const delayMs = Math.round(lo + Math.random() * (hi - lo));
    if (done >= this.o.scale.callsPerTask) return { content: `done: ${goal}`, delayMs };
    const entry = this.o.varying ? `${goal} step ${done + 1} nonce ${randomUUID().slice(0, 8)}` : `${goal} step ${done + 1}`;
    const tool = this.o.tool ?? { name: 'ledger_append' };
    return { toolCalls: [{ name: tool.name, arguments: { ...tool.args, entry: entry.slice(0, 200) } }], delayMs };
  }

  /** Steps of these goals asked for after a later step of theirs: answers checkpointed and then lost or ignored. */
  askedBehind(goals: readonly string[]): number {
    return this.behind.filter((g) => goals.includes(g)).length;
  }

  /** Steps of these goals asked for more than once. */
  reasked(goals: readonly string[]): number {
    let n = 0;
    for (const [key, count] of this.asked) if (count > 1 && goals.includes(key.slice(0, key.lastIndexOf('#')))) n += count - 1;
    return n;
  }
}

/**
 * Runs one scenario: submits the tasks, waits until `startAt` of all side effects are written,
 * injects the fault (which also restores the system, e.g. restarts what it killed), waits for every
 * task to end, and counts what was lost or repeated.
 */
export async function runFault(o: {
  stack: Stack;
  ledger: Ledger;
  model: FaultModel;
  scale: FaultScale;
  scenario: string;
  inject: () => Promise<void>;
  startAt?: number;
  /** Bound on the whole run: generous, a fault and its recovery on a loaded 2-core machine. */
  timeoutMs?: number;
}): Promise<FaultReport> {
  const { stack, ledger, scale } = o;
  const started = Date.now();
  const goals = Array.from({ length: scale.tasks }, (_, i) => `fault ${o.scenario} ${started.toString(36)} task ${i}`);
  const ids = await Promise.all(
    goals.map((goal, i) =>
      submitTask(stack.bus, { user_id: `faulty${i % 4}`, goal }, { team: DEFAULT_TEAM, source: '/faults', id: randomUUID() }).then((s) => s.taskId),
    ),
  );
  const watches = ids.map((id) => watchTask(stack.bus, id, o.timeoutMs ?? 240_000).done.catch(() => undefined));
  const effects = () => ledger.lines().filter((l) => ids.includes(l.task_id));
  const total = scale.tasks * scale.callsPerTask;
  const threshold = Math.ceil(total * (o.startAt ?? 0.3));
  const deadline = Date.now() + 120_000;
  while (effects().length < threshold) {
    if (Date.now() > deadline) throw new Error(`${o.scenario}: only ${effects().length} of ${threshold} effects before the fault`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const times: number[] = [];
  const seen = new Set<number>();
  const sampler = setInterval(() => {
    const n = effects().length;
    if (!seen.has(n)) {
      seen.add(n);
      times.push(Date.now());
    }
  }, 20);
  const faultAt = Date.now();
  const outcomes = await (async () => {
    try {
      await o.inject();
      return await Promise.all(watches);
    } finally {
      clearInterval(sampler);
    }
  })();
  const lines = effects();
  const byKey = new Map<string, number>();
  for (const l of lines) byKey.set(l.key, (byKey.get(l.key) ?? 0) + 1);
  const ends = outcomes.map((events) => (events ? endOf(events) : 'stuck'));
  const completedIds = ids.filter((_, i) => ends[i] === 'completed');
  const tool_errors: Record<string, number> = {};
  for (const id of ids) {
    for (const r of await auditRecords(stack.bus, id, 0))
      if (r.outcome === 'error') tool_errors[r.error_code ?? '?'] = (tool_errors[r.error_code ?? '?'] ?? 0) + 1;
  }
  const after = times.filter((t) => t >= faultAt);
  const gaps = [faultAt, ...after].slice(1).map((t, i) => t - [faultAt, ...after][i]!);
  return {
    scenario: o.scenario,
    tasks: scale.tasks,
    calls_per_task: scale.callsPerTask,
    completed: completedIds.length,
    failed: ends.filter((e) => e !== 'completed' && e !== 'stuck'),
    stuck: ends.filter((e) => e === 'stuck').length,
    duplicate_keys: [...byKey.values()].filter((n) => n > 1).length,
    wrong_effect_counts: completedIds.filter((id) => lines.filter((l) => l.task_id === id).length !== scale.callsPerTask).length,
    tool_errors,
    reasked_steps: o.model.reasked(goals),
    reasked_after_checkpoint: o.model.askedBehind(goals),
    stall_ms: gaps.length ? Math.max(...gaps) : 0,
    recovery_ms: after.length ? after[0]! - faultAt : -1,
    last_effect_ms: after.length ? after.at(-1)! - faultAt : -1,
    duration_ms: Date.now() - started,
  };
}

function endOf(events: TaskEvent[]): string {
  const last = events.at(-1);
  if (!last) return 'stuck';
  const failed = taskEventData(last, 'failed');
  return failed ? `failed:${failed.error.code}` : taskEventKind(last);
}

/** Writes the reports of a `FAULT_SCALE=full` run where docs/operations.md's table is read from. */
export function saveReports(reports: FaultReport[], name = 'faults'): void {
  if (process.env.FAULT_SCALE !== 'full') return;
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify({ at: new Date().toISOString(), reports }, null, 2)}\n`);
  const rows = reports.map(
    (r) =>
      `| ${r.scenario} | ${r.completed}/${r.tasks} | ${r.failed.length + r.stuck} | ${r.duplicate_keys} | ${r.reasked_steps} | ${r.reasked_after_checkpoint} | ${r.recovery_ms} | ${r.stall_ms} |`,
  );
  writeFileSync(
    new URL(`${name}.md`, dir),
    [
      '| fault | completed | failed or stuck | duplicate effects | steps asked again | asked again after a later step | first effect after (ms) | longest stall (ms) |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}
