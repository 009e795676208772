import {
  wireError,
  type CoordinationJob,
  type PlanState,
  type RuntimeJob,
  type RuntimeResult,
  type SubtaskOutcome,
  type SubtaskState,
  type TaskEventDataByKind,
  type TaskView,
  type TokenUsage,
  type WireError,
} from '@hermes/contracts';
import { checkPlan } from './plan-validation.js';

/** Limits of planned tasks (dispatcher settings, see docs/planning.md). */
export interface PlanSettings {
  maxSubtasks: number;
  maxRetries: number;
  maxReplans: number;
  /** First retry back-off; doubled per attempt. */
  retryBaseMs: number;
  subtaskTimeoutMs: number;
  /** A claimed job not marked dispatched after this long is published again (same msg id). */
  redispatchAfterMs: number;
}

/** Something to do once a state change has been written (compare-and-set won). */
export type Action =
  | { kind: 'job'; job: RuntimeJob }
  | { kind: 'planned'; data: TaskEventDataByKind['planned'] }
  | { kind: 'completed'; data: TaskEventDataByKind['completed']; userId: string }
  | { kind: 'failed'; data: TaskEventDataByKind['failed']; userId: string }
  | { kind: 'stop_jobs'; reason: string };

export interface Step {
  view: TaskView;
  actions: Action[];
}

interface Ctx {
  now: number;
  settings: PlanSettings;
  roles: string[];
}

const ENDED = new Set(['completed', 'failed', 'cancelled']);
const iso = (ms: number) => new Date(ms).toISOString();
const addUsage = (a: TokenUsage, b: TokenUsage): TokenUsage => ({ input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens });

/** The planning job a newly accepted task starts with. */
export function initialPlan(taskId: string, now: number): PlanState {
  return { stage: 'planning', subtasks: [], replans: 0, job: { job_id: planJobId(taskId, 0, 'plan', 1), kind: 'plan', purpose: 'plan', attempt: 1, claimed_at: iso(now) } };
}

/** Job id of a planning job: one per (re-)plan and attempt, so each is de-duplicated but never confused with another. */
export function planJobId(taskId: string, replans: number, purpose: 'plan' | 'replan', attempt: number): string {
  return purpose === 'plan' ? `${taskId}-plan-${attempt}` : `${taskId}-replan${replans + 1}-${attempt}`;
}

/**
 * Applies a runtime result to a planned task and moves it on. Results of jobs the state does not
 * wait for (a duplicate, a retried job's late first answer) change nothing.
 */
export function applyResult(v: TaskView, r: RuntimeResult, ctx: Ctx): Step {
  if (ENDED.has(v.status) || !v.plan) return { view: v, actions: [] };
  const plan = structuredClone(v.plan);
  const actions: Action[] = [];
  let view: TaskView = { ...v, plan, attempts: Math.max(v.attempts, r.attempt) };

  if (plan.job && plan.job.job_id === r.job_id) {
    view.usage = addUsage(view.usage, r.usage);
    const job = plan.job;
    if (job.kind === 'compose') {
      if (r.outcome === 'succeeded') return finish(complete(view, r.output ?? ''), ctx);
      return finish(fail(view, r.error ?? wireError('internal', 'compose job failed without an error')), ctx);
    }
    if (r.outcome === 'failed') {
      const cause = r.error ?? wireError('internal', 'planning job failed without an error');
      return finish(fail(view, wireError('plan_failed', `planning failed: ${cause.message}`, { cause, ...(job.purpose === 'replan' ? { report: report(plan) } : {}) })), ctx);
    }
    const checked = checkPlan(r.plan, { maxSubtasks: ctx.settings.maxSubtasks, allowedTools: v.options?.tools, ...(job.purpose === 'replan' ? { existing: plan.subtasks } : {}) });
    if (!checked.ok) {
      if (job.attempt >= 2) {
        return finish(fail(view, wireError('plan_invalid', `the planner produced an invalid plan twice: ${checked.errors.join('; ')}`, { errors: checked.errors, ...(job.purpose === 'replan' ? { report: report(plan) } : {}) })), ctx);
      }
      const purpose = job.purpose ?? 'plan';
      plan.job = { ...job, job_id: planJobId(v.task_id, plan.replans, purpose, 2), attempt: 2, errors: checked.errors, claimed_at: iso(ctx.now) };
      delete plan.job.dispatched_at;
      actions.push({ kind: 'job', job: coordinationJob(view, plan.job, ctx) });
      return { view, actions };
    }
    const generation = job.purpose === 'replan' ? plan.replans + 1 : 0;
    for (const s of checked.plan.subtasks) {
      plan.subtasks.push({
        id: s.id,
        intent: s.intent,
        ...(s.inputs ? { inputs: s.inputs } : {}),
        depends_on: s.depends_on,
        ...(s.tools ? { tools: s.tools } : {}),
        status: 'pending',
        attempts: 0,
        generation,
      });
    }
    if (job.purpose === 'replan') plan.replans += 1;
    plan.stage = 'running';
    const replaced = job.replacing;
    delete plan.job;
    actions.push({
      kind: 'planned',
      data: {
        task_id: v.task_id,
        subtasks: checked.plan.subtasks.map((s) => ({ id: s.id, intent: s.intent, depends_on: s.depends_on, ...(s.tools ? { tools: s.tools } : {}) })),
        replans: plan.replans,
        ...(replaced ? { replaced } : {}),
      },
    });
    const next = advance(view, ctx);
    return { view: next.view, actions: [...actions, ...next.actions] };
  }

  const node = plan.subtasks.find((s) => s.job_id === r.job_id && s.status === 'running');
  if (!node) return { view: v, actions: [] };
  view.usage = addUsage(view.usage, r.usage);
  node.usage = addUsage(node.usage ?? { input_tokens: 0, output_tokens: 0 }, r.usage);
  delete node.claimed_at;
  delete node.dispatched_at;
  if (r.outcome === 'succeeded') {
    node.status = 'succeeded';
    node.output = r.output ?? '';
    delete node.error;
  } else {
    failNode(node, r.error ?? wireError('internal', 'runtime reported failure without an error'), ctx);
  }
  view = { ...view, plan };
  const next = advance(view, ctx);
  return { view: next.view, actions: next.actions };
}

/** Retryable failures go back to pending with a back-off (`retry_at`); others fail the subtask for good. */
function failNode(node: SubtaskState, error: WireError, ctx: Ctx): void {
  node.error = error;
  if (error.retryable && node.attempts <= ctx.settings.maxRetries) {
    node.status = 'pending';
    node.retry_at = iso(ctx.now + ctx.settings.retryBaseMs * 2 ** (node.attempts - 1));
  } else {
    node.status = 'failed';
  }
}

/**
 * Moves a task as far as its state allows: task deadline, subtask timeouts, dispatching ready
 * subtasks (and retries that are due), publishing again jobs a dead dispatcher claimed but never
 * marked sent, re-planning failed subtasks, and finishing. Pure: the caller writes the returned
 * view with compare-and-set and, only if that wins, performs the actions.
 */
export function advance(v: TaskView, ctx: Ctx): Step {
  if (ENDED.has(v.status)) return { view: v, actions: [] };
  if (v.deadline_at && ctx.now >= Date.parse(v.deadline_at)) {
    const step = finish(fail({ ...v, ...(v.plan ? { plan: structuredClone(v.plan) } : {}) }, wireError('task_timeout', `the task did not finish by its deadline ${v.deadline_at}`, { deadline_at: v.deadline_at, ...(v.plan ? { report: report(v.plan) } : {}) })), ctx);
    step.actions.push({ kind: 'stop_jobs', reason: 'task timed out' });
    return step;
  }
  if (!v.plan) return { view: v, actions: [] };
  const plan = structuredClone(v.plan);
  const view: TaskView = { ...v, plan };
  const actions: Action[] = [];
  const stale = (claimedAt: string | undefined) => claimedAt !== undefined && ctx.now - Date.parse(claimedAt) >= ctx.settings.redispatchAfterMs;

  if (plan.job && !plan.job.dispatched_at && stale(plan.job.claimed_at)) {
    actions.push({ kind: 'job', job: coordinationJob(view, plan.job, ctx) });
  }
  if (plan.stage === 'composing' || plan.stage === 'done') return { view, actions };

  const byId = new Map(plan.subtasks.map((s) => [s.id, s]));
  for (const s of plan.subtasks) {
    if (s.status !== 'running') continue;
    const since = s.dispatched_at ?? s.claimed_at;
    if (since && ctx.now - Date.parse(since) >= ctx.settings.subtaskTimeoutMs) {
      delete s.claimed_at;
      delete s.dispatched_at;
      failNode(s, wireError('subtask_timeout', `subtask ${s.id} ran longer than ${ctx.settings.subtaskTimeoutMs} ms`, { job_id: s.job_id }), ctx);
    } else if (!s.dispatched_at && stale(s.claimed_at)) {
      actions.push({ kind: 'job', job: subtaskJob(view, s, ctx) });
    }
  }
  for (const s of plan.subtasks) {
    if (s.status !== 'pending' || (s.retry_at && Date.parse(s.retry_at) > ctx.now)) continue;
    if (!s.depends_on.every((d) => byId.get(d)?.status === 'succeeded')) continue;
    s.status = 'running';
    s.attempts += 1;
    s.job_id = `${v.task_id}-${s.id}-${s.attempts}`;
    s.claimed_at = iso(ctx.now);
    delete s.retry_at;
    actions.push({ kind: 'job', job: subtaskJob(view, s, ctx) });
  }

  if (plan.stage !== 'running') return { view, actions };
  const failed = plan.subtasks.find((s) => s.status === 'failed' && !s.replaced);
  if (failed) {
    if (plan.replans >= ctx.settings.maxReplans) {
      const code = ctx.settings.maxReplans === 0 ? 'subtask_failed' : 'replan_exhausted';
      const step = finish(fail(view, wireError(code, `subtask ${failed.id} failed (${failed.error?.code ?? 'unknown'}: ${failed.error?.message ?? ''}) after ${plan.replans} re-plan(s)`, { subtask_id: failed.id, report: report(plan) })), ctx);
      step.actions.unshift(...actions.filter((a) => a.kind !== 'job'));
      return step;
    }
    const replacing = [failed.id, ...dependentsOf(plan.subtasks, failed.id)];
    failed.replaced = true;
    for (const id of replacing.slice(1)) {
      const s = byId.get(id);
      if (s && s.status === 'pending') s.status = 'skipped';
    }
    plan.stage = 'planning';
    plan.job = { job_id: planJobId(v.task_id, plan.replans, 'replan', 1), kind: 'plan', purpose: 'replan', attempt: 1, claimed_at: iso(ctx.now), replacing };
    actions.push({ kind: 'job', job: coordinationJob(view, plan.job, ctx) });
    return { view, actions };
  }

  const active = plan.subtasks.filter(isActive);
  if (active.length > 0 && active.every((s) => s.status === 'succeeded')) {
    const sinks = active.filter((s) => !active.some((o) => o.depends_on.includes(s.id)));
    if (sinks.length === 1) return finish(complete(view, sinks[0]!.output ?? ''), ctx, actions);
    plan.stage = 'composing';
    plan.job = { job_id: `${v.task_id}-compose`, kind: 'compose', attempt: 1, claimed_at: iso(ctx.now) };
    actions.push({ kind: 'job', job: coordinationJob(view, plan.job, ctx) });
  }
  return { view, actions };
}

/** Subtasks that still count: not replaced by a re-plan, not skipped. */
const isActive = (s: SubtaskState) => s.status !== 'skipped' && !(s.status === 'failed' && s.replaced);

/** Every subtask that depends, directly or not, on `id`, except those that already succeeded. */
export function dependentsOf(subtasks: readonly SubtaskState[], id: string): string[] {
  const out: string[] = [];
  const queue = [id];
  while (queue.length) {
    const current = queue.shift()!;
    for (const s of subtasks) {
      if (s.depends_on.includes(current) && !out.includes(s.id) && s.status !== 'succeeded' && isActive(s)) {
        out.push(s.id);
        queue.push(s.id);
      }
    }
  }
  return out;
}

/** Per-subtask outcomes, for the completed/failed event and failure reports. */
export function outcomes(plan: PlanState): SubtaskOutcome[] {
  return plan.subtasks.map((s) => ({
    id: s.id,
    intent: s.intent,
    status: s.status,
    attempts: s.attempts,
    ...(s.error ? { error: s.error } : {}),
    ...(s.usage ? { usage: s.usage } : {}),
  }));
}

function report(plan: PlanState) {
  return {
    succeeded: plan.subtasks.filter((s) => s.status === 'succeeded').map((s) => s.id),
    failed: plan.subtasks.filter((s) => s.status === 'failed').map((s) => ({ id: s.id, error: s.error })),
    not_run: plan.subtasks.filter((s) => s.status === 'pending' || s.status === 'skipped' || s.status === 'running').map((s) => s.id),
  };
}

function complete(v: TaskView, output: string): TaskView {
  const plan = v.plan ? { ...v.plan, stage: 'done' as const } : undefined;
  if (plan) delete plan.job;
  return { ...v, status: 'completed', result: { output }, ...(plan ? { plan } : {}) };
}

function fail(v: TaskView, error: WireError): TaskView {
  const plan = v.plan ? { ...v.plan, stage: 'done' as const } : undefined;
  if (plan) delete plan.job;
  return { ...v, status: 'failed', error, ...(plan ? { plan } : {}) };
}

function finish(v: TaskView, _ctx: Ctx, before: Action[] = []): Step {
  return { view: v, actions: [...before.filter((a) => a.kind !== 'job'), ...terminalActions(v)] };
}

/** The terminal event of an ended task (published again by the sweep if a dispatcher died before it). */
export function terminalActions(v: TaskView): Action[] {
  const subtasks = v.plan ? { subtasks: outcomes(v.plan) } : {};
  if (v.status === 'completed' && v.result) return [{ kind: 'completed', userId: v.user_id, data: { task_id: v.task_id, result: v.result, usage: v.usage, ...subtasks } }];
  if (v.status === 'failed' && v.error) return [{ kind: 'failed', userId: v.user_id, data: { task_id: v.task_id, error: v.error, usage: v.usage, ...subtasks } }];
  return [];
}

/**
 * Inputs of a subtask's job: its own and the task's, plus the ids of the subtasks it depends on.
 * Their outputs are not copied here: each subtask writes its output to the task's working memory
 * (memory service), and the runtime reads the dependencies' outputs from there.
 */
function subtaskJob(v: TaskView, s: SubtaskState, ctx: Ctx): RuntimeJob {
  const o = v.options ?? {};
  const tools = s.tools ?? o.tools;
  return {
    job_id: s.job_id!,
    task_id: v.task_id,
    subtask_id: s.id,
    user_id: v.user_id,
    roles: ctx.roles,
    session_id: v.session_id,
    goal: s.intent,
    model_role: 'worker',
    kind: 'agent',
    inputs: {
      task_goal: v.goal,
      ...(o.inputs ? { task_inputs: o.inputs } : {}),
      ...(s.inputs ? { subtask_inputs: s.inputs } : {}),
      ...(s.depends_on.length ? { depends_on: s.depends_on } : {}),
    },
    ...(tools ? { tools } : {}),
    ...(o.budget ? { budget: o.budget } : {}),
    ...(o.stream !== undefined ? { stream: o.stream } : {}),
  };
}

/** A planning or composing job, built from the state alone, so any replica can publish it again. */
export function coordinationJob(v: TaskView, job: CoordinationJob, ctx: Ctx): RuntimeJob {
  const o = v.options ?? {};
  const base = {
    job_id: job.job_id,
    task_id: v.task_id,
    user_id: v.user_id,
    roles: ctx.roles,
    session_id: v.session_id,
    goal: v.goal,
  };
  const plan = v.plan!;
  if (job.kind === 'compose') {
    const outputs = Object.fromEntries(plan.subtasks.filter((s) => s.status === 'succeeded').map((s) => [s.id, { intent: s.intent, output: s.output ?? '' }]));
    return { ...base, subtask_id: 'compose', model_role: 'worker', kind: 'compose', inputs: { subtask_outputs: outputs } };
  }
  const failedId = job.replacing?.[0];
  const failed = failedId ? plan.subtasks.find((s) => s.id === failedId) : undefined;
  const inputs: Record<string, unknown> = {
    max_subtasks: ctx.settings.maxSubtasks,
    ...(o.inputs ? { task_inputs: o.inputs } : {}),
    ...(job.errors ? { invalid_plan_errors: job.errors } : {}),
    ...(job.purpose === 'replan'
      ? {
          replan: {
            replace: job.replacing ?? [],
            failed: failed ? { id: failed.id, intent: failed.intent, error: failed.error } : undefined,
            completed: Object.fromEntries(plan.subtasks.filter((s) => s.status === 'succeeded').map((s) => [s.id, { intent: s.intent, output: s.output ?? '' }])),
            existing_ids: plan.subtasks.map((s) => s.id),
          },
        }
      : {}),
  };
  return {
    ...base,
    subtask_id: job.purpose === 'replan' ? `replan${plan.replans + 1}` : 'plan',
    model_role: 'planner',
    kind: 'plan',
    inputs,
    ...(o.tools ? { tools: o.tools } : {}),
  };
}
