import { randomUUID } from 'node:crypto';
import { appendRecording, readRecording, type Bus } from '@hermes/bus';
import type { EvalCase, EvalCaseResult, EvalResults, EvalSuite, GraderResult, ScriptTurn, TaskRequest } from '@hermes/contracts';
import { grade, type GradedRun } from './eval-graders.js';
import { summarize } from './recording-summary.js';
import { plannedTaskId, runToEnd, type TaskRun } from './task-runs.js';

export interface EvalRunOptions {
  bus: Bus;
  suite: EvalSuite;
  team: string;
  /** Cases run at once; their LLM calls queue in the global semaphore like any task's. */
  concurrency: number;
  /** Per task (setup, case, judge). */
  timeoutMs: number;
  /** Only these case ids (all when absent). */
  only?: readonly string[];
  signal?: AbortSignal;
}

/**
 * Runs a suite through the real services: each case is a recorded task (its setup tasks first,
 * as the same user), answered by its scripted model, a recording, or the live pool; then its
 * recording and outcome are graded. Each run has users of its own, so runs never see each other's memories.
 */
export async function runSuite(o: EvalRunOptions): Promise<EvalResults> {
  const runId = randomUUID().slice(0, 8);
  const startedAt = new Date().toISOString();
  const cases = o.suite.cases.filter((c) => !o.only || o.only.includes(c.id));
  const results: EvalCaseResult[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < cases.length; i = next++) results[i] = await runCase(o, cases[i]!, `eval-${runId}-${cases[i]!.id}`.slice(0, 128));
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, cases.length)) }, worker));
  const passed = results.filter((r) => r.passed).length;
  return { version: 1, suite: o.suite.suite, started_at: startedAt, pass_rate: cases.length ? passed / cases.length : 0, cases: results };
}

async function runCase(o: EvalRunOptions, c: EvalCase, user: string): Promise<EvalCaseResult> {
  for (const setup of c.setup ?? []) {
    await runTask(
      o,
      user,
      { goal: setup.goal, ...(setup.inputs ? { inputs: setup.inputs } : {}), ...(setup.tools ? { tools: setup.tools } : {}) },
      setup.script,
    );
  }
  const request: Omit<TaskRequest, 'user_id'> = {
    goal: c.goal,
    ...(c.inputs ? { inputs: c.inputs } : {}),
    ...(c.tools ? { tools: c.tools } : {}),
    ...(c.budget ? { budget: c.budget } : {}),
    ...(c.model && 'recording' in c.model ? { replay: { source_task: c.model.recording, mode: 'recording', tools: c.model.tools ?? 'recorded' } } : {}),
  };
  const run = await runTask(o, user, request, c.model && 'script' in c.model ? c.model.script : undefined);
  const summary = summarize(await readRecording(o.bus, run.taskId, o.signal ? { signal: o.signal } : {}));
  const graded: GradedRun = { run, summary };
  const graders: GraderResult[] = [];
  for (const g of c.graders) graders.push(g.type === 'llm_judge' ? await judge(o, user, g, graded, c.goal) : grade(g, graded));
  const price = o.suite.cost_per_million_tokens;
  return {
    id: c.id,
    task_id: run.taskId,
    passed: graders.every((g) => g.passed),
    status: run.status,
    ...(run.errorCode ? { error_code: run.errorCode } : {}),
    ...(run.output !== undefined ? { final_answer: run.output } : {}),
    tool_calls: summary.calls.map((k) => ({ step: k.step, name: k.name, arguments: k.arguments, ok: k.ok })),
    steps: summary.steps,
    tokens: summary.tokens,
    latency_ms: run.latencyMs,
    ...(price ? { cost: (summary.tokens.input * price.input + summary.tokens.output * price.output) / 1_000_000 } : {}),
    graders,
  };
}

/**
 * The LLM-as-judge grader is a Hermes task itself: its call goes through the runtime and the
 * global semaphore like every other, and offline it answers from the grader's script.
 */
async function judge(o: EvalRunOptions, user: string, g: { rubric: string; script?: ScriptTurn[] }, r: GradedRun, caseGoal: string): Promise<GraderResult> {
  const goal = [
    "You grade an AI agent's final answer against a rubric. Answer with one line: PASS or FAIL, a colon, and the reason.",
    `Rubric: ${g.rubric}`,
    `The agent's goal was: ${caseGoal}`,
    r.summary.calls.length ? `It used the tools ${[...new Set(r.summary.calls.map((c) => c.name))].join(', ')}.` : 'It used no tools.',
    'Its final answer is in the inputs.',
  ].join('\n');
  const run = await runTask(o, user, { goal, inputs: { final_answer: r.run.output ?? r.summary.finalAnswer ?? '' }, tools: [] }, g.script);
  const verdict = (run.output ?? '').trim();
  return { grader: 'llm_judge', passed: run.status === 'completed' && /^pass\b/i.test(verdict), detail: verdict || `judge task ${run.status}` };
}

/** One recorded task of a case; a script is stored under the task's id before it is submitted, so its first job finds it. */
async function runTask(o: EvalRunOptions, user: string, request: Omit<TaskRequest, 'user_id'>, script?: ScriptTurn[]): Promise<TaskRun> {
  const source = `/hermes/eval/${o.suite.suite}`;
  const id = randomUUID();
  const taskId = plannedTaskId(o.team, source, id);
  if (script) {
    await appendRecording(o.bus, { kind: 'script', task_id: taskId, user_id: user, team: o.team, at: new Date().toISOString(), turns: script });
  }
  return runToEnd(o.bus, {
    team: o.team,
    source,
    id,
    request: { ...request, user_id: user, record: true, ...(script ? { replay: { source_task: taskId, mode: 'script', tools: 'live' } } : {}) },
    timeoutMs: o.timeoutMs,
    ...(o.signal ? { signal: o.signal } : {}),
  });
}
