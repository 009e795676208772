import {
  isCallerFault,
  isTerminalStatus,
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
import { coordinationJob, subtaskJob, type JobContext } from './job-builder.js';
import { checkVerdict, pendingReview, reviewJob, sendBack } from './plan-review.js';

/** Limits of planned tasks (dispatcher settings, see docs/planning.md). */
export interface PlanSettings {
  maxSubtasks: number;
  maxRetries: number;
  maxReplans: number;
  /** First retry back-off; doubled per attempt. */
  retryBaseMs: number;
  /** Carried by each agent job; its runtime counts it from the job's start, so time queued behind the LLM cap never counts. */
  subtaskTimeoutMs: number;
  /** A claimed job not marked dispatched after this long is published again (same msg id). */
  redispatchAfterMs: number;
  /** How long a question (ask_user) waits for its answer (ASK_USER_TIMEOUT_MS). */
  inputTimeoutMs: number;
  /** What then: `fail` ends the task input_timeout, `continue` resumes it telling the model nobody answered. */
  inputTimeoutPolicy: 'fail' | 'continue';
  /** REVIEW_ROUNDS: how often a reviewer may send subtasks back when the task or its plan asks for a review but names no number. */
  reviewRounds: number;
}

/** Something to do once a state change has been written (compare-and-set won). */
export type Action =
  | { kind: 'accepted' }
  | { kind: 'job'; job: RuntimeJob }
  | { kind: 'planned'; data: TaskEventDataByKind['planned'] }
  | { kind: 'input_required'; data: TaskEventDataByKind['input_required'] }
  | { kind: 'review_started'; data: TaskEventDataByKind['review_started'] }
  | { kind: 'review_verdict'; data: TaskEventDataByKind['review_verdict'] }
  | { kind: 'completed'; data: TaskEventDataByKind['completed']; userId: string }
  | { kind: 'failed'; data: TaskEventDataByKind['failed']; userId: string }
  | { kind: 'cancelled'; data: TaskEventDataByKind['cancelled']; userId: string }
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

const iso = (ms: number) => new Date(ms).toISOString();
const addUsage = (a: TokenUsage, b: TokenUsage): TokenUsage => ({
  input_tokens: a.input_tokens + b.input_tokens,
  output_tokens: a.output_tokens + b.output_tokens,
});

/** The planning job a newly accepted task starts with. */
export function initialPlan(taskId: string, now: number): PlanState {
  return {
    stage: 'planning',
    subtasks: [],
    replans: 0,
    job: { job_id: planJobId(taskId, 0, 'plan', 1), kind: 'plan', purpose: 'plan', attempt: 1, claimed_at: iso(now) },
  };
}

/** PLAN_MODE=single: the goal as the one subtask of a plan nobody re-plans, run like any other. */
export function singlePlan(goal: string): PlanState {
  return {
    origin: 'single',
    stage: 'running',
    replans: 0,
    subtasks: [{ id: 'main', intent: goal, depends_on: [], status: 'pending', attempts: 0, generation: 0 }],
  };
}

/**
 * The plan of a task, also for one stored before every task had a plan (a single job
 * `<task>-main` dispatched by an older dispatcher): read as that job's one-node plan, so its
 * result is handled like any other during a rolling upgrade.
 */
export function withPlan(v: TaskView): TaskView {
  if (v.plan || isTerminalStatus(v.status)) return v;
  const plan = singlePlan(v.goal);
  if (v.status === 'running') {
    plan.subtasks[0] = {
      ...plan.subtasks[0]!,
      status: 'running',
      attempts: Math.max(1, v.attempts),
      job_id: `${v.task_id}-main`,
      claimed_at: v.updated_at,
      dispatched_at: v.updated_at,
    };
  }
  return { ...v, plan };
}

/**
 * A newly created task starts: it runs, `accepted` goes out, and so does its first job (the
 * planning job, or the single subtask). Only the writer that moves it out of `accepted`
 * performs this, so `accepted` is published once however often the submission is delivered.
 */
export function begin(v: TaskView, ctx: Ctx): Step | undefined {
  if (v.status !== 'accepted') return undefined;
  const running = withPlan({ ...v, status: 'running' });
  const job = running.plan?.job;
  const first: Action[] = job && !job.dispatched_at ? [{ kind: 'job', job: coordinationJob(running, job, jobCtx(ctx)) }] : [];
  const next = advance(running, ctx);
  return { view: next.view, actions: [{ kind: 'accepted' }, ...first, ...next.actions] };
}

/** Cancels a task that has not ended: its end is `cancelled`, and runtimes are told to stop its jobs. */
export function cancel(v: TaskView, reason: string | undefined): Step | undefined {
  if (isTerminalStatus(v.status)) return undefined;
  const plan = v.plan ? { ...v.plan, stage: 'done' as const } : undefined;
  if (plan) delete plan.job;
  const view: TaskView = { ...v, status: 'cancelled', error: wireError('cancelled', reason ?? 'cancelled on request'), ...(plan ? { plan } : {}) };
  return { view, actions: [...terminalActions(view, reason), { kind: 'stop_jobs', reason: reason ?? 'task cancelled' }] };
}

const jobCtx = (ctx: Ctx): JobContext => ({ roles: ctx.roles, maxSubtasks: ctx.settings.maxSubtasks, subtaskTimeoutMs: ctx.settings.subtaskTimeoutMs });

/** Job id of a planning job: one per (re-)plan and attempt, so each is de-duplicated but never confused with another. */
export function planJobId(taskId: string, replans: number, purpose: 'plan' | 'replan', attempt: number): string {
  return purpose === 'plan' ? `${taskId}-plan-${attempt}` : `${taskId}-replan${replans + 1}-${attempt}`;
}

/**
 * Applies a runtime result to a planned task and moves it on. Results of jobs the state does not
 * wait for (a duplicate, a retried job's late first answer) change nothing.
 */
export function applyResult(stored: TaskView, r: RuntimeResult, ctx: Ctx): Step {
  const v = withPlan(stored);
  if (isTerminalStatus(v.status) || !v.plan) return { view: stored, actions: [] };
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
    if (job.kind === 'review') return reviewed(view, plan, job, r, ctx);
    if (r.outcome === 'failed') {
      const cause = r.error ?? wireError('internal', 'planning job failed without an error');
      return finish(
        fail(view, wireError('plan_failed', `planning failed: ${cause.message}`, { cause, ...(job.purpose === 'replan' ? { report: report(plan) } : {}) })),
        ctx,
      );
    }
    const checked = checkPlan(r.plan, {
      maxSubtasks: ctx.settings.maxSubtasks,
      allowedTools: v.options?.tools,
      ...(job.purpose === 'replan' ? { existing: plan.subtasks } : {}),
    });
    if (!checked.ok) {
      if (job.attempt >= 2) {
        return finish(
          fail(
            view,
            wireError('plan_invalid', `the planner produced an invalid plan twice: ${checked.errors.join('; ')}`, {
              errors: checked.errors,
              ...(job.purpose === 'replan' ? { report: report(plan) } : {}),
            }),
          ),
          ctx,
        );
      }
      const purpose = job.purpose ?? 'plan';
      plan.job = { ...job, job_id: planJobId(v.task_id, plan.replans, purpose, 2), attempt: 2, errors: checked.errors, claimed_at: iso(ctx.now) };
      delete plan.job.dispatched_at;
      actions.push({ kind: 'job', job: coordinationJob(view, plan.job, jobCtx(ctx)) });
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
    // The planner may end its plan in a review; REVIEW_ROUNDS bounds it (a submission's own review_rounds wins).
    if (checked.plan.review && !plan.review) plan.review = { rounds: v.options?.review_rounds ?? ctx.settings.reviewRounds, round: 0 };
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
  if (!node) return { view: stored, actions: [] };
  view.usage = addUsage(view.usage, r.usage);
  node.usage = addUsage(node.usage ?? { input_tokens: 0, output_tokens: 0 }, r.usage);
  delete node.claimed_at;
  delete node.dispatched_at;
  // The answer went with the job that reported: a later job of the subtask starts without it.
  delete node.input;
  if (r.outcome === 'input_required' && r.question) {
    const round = (node.input_rounds ?? 0) + 1;
    node.status = 'input_required';
    node.input_rounds = round;
    node.input = {
      call_id: r.question.call_id,
      question: r.question.question,
      ...(r.question.choices ? { choices: r.question.choices } : {}),
      asked_by: r.job_id,
      asked_at: iso(ctx.now),
      deadline_at: iso(ctx.now + ctx.settings.inputTimeoutMs),
      round,
      ...(r.question.usage_total ? { usage_total: r.question.usage_total } : {}),
    };
    view = { ...view, plan, status: 'input_required' };
    const asked: Action = {
      kind: 'input_required',
      data: {
        task_id: v.task_id,
        subtask_id: node.id,
        call_id: node.input.call_id,
        question: node.input.question,
        ...(node.input.choices ? { choices: node.input.choices } : {}),
        deadline_at: node.input.deadline_at,
      },
    };
    const next = advance(view, ctx);
    return { view: next.view, actions: [asked, ...next.actions] };
  }
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

/**
 * A reviewer's verdict: accept ends the task with its answer; revise sends the named subtasks
 * back for one more attempt, or, with no round left, ends the review unaccepted and the last
 * outputs are composed. A malformed verdict is sent back once, then the task fails review_invalid.
 */
function reviewed(view: TaskView, plan: PlanState, job: CoordinationJob, r: RuntimeResult, ctx: Ctx): Step {
  if (r.outcome !== 'succeeded') return finish(fail(view, r.error ?? wireError('internal', 'review job failed without an error')), ctx);
  const review = plan.review!;
  const checked = checkVerdict(
    r.verdict,
    plan.subtasks.filter(isActive).map((s) => s.id),
  );
  if (!checked.ok) {
    if (job.attempt >= 2) {
      const error = wireError('review_invalid', `the reviewer answered a malformed verdict twice: ${checked.errors.join('; ')}`, {
        errors: checked.errors,
        round: review.round,
      });
      return finish(fail(view, error), ctx);
    }
    plan.job = reviewJob(view.task_id, review.round, 2, ctx.now, checked.errors);
    return { view, actions: [{ kind: 'job', job: coordinationJob(view, plan.job, jobCtx(ctx)) }] };
  }
  const verdict = checked.verdict;
  delete plan.job;
  if (verdict.verdict === 'accept') {
    plan.review = { rounds: review.rounds, round: review.round, accepted: true };
    const said: Action = { kind: 'review_verdict', data: { task_id: view.task_id, round: review.round, verdict: 'accept' } };
    return finish(complete(view, verdict.answer), ctx, [said]);
  }
  const exhausted = review.round > review.rounds;
  plan.review = { ...review, notes: verdict.subtasks, ...(exhausted ? { accepted: false } : {}) };
  if (!exhausted) sendBack(plan, verdict.subtasks, review.round);
  plan.stage = 'running';
  const said: Action = {
    kind: 'review_verdict',
    data: { task_id: view.task_id, round: review.round, verdict: 'revise', subtasks: verdict.subtasks, ...(exhausted ? { exhausted: true } : {}) },
  };
  const next = advance(view, ctx);
  return { view: next.view, actions: [said, ...next.actions] };
}

/** Retryable failures go back to pending with a back-off (`retry_at`); others fail the subtask for good. */
function failNode(node: SubtaskState, error: WireError, ctx: Ctx): void {
  node.error = error;
  if (error.retryable && !isCallerFault(error) && node.attempts <= ctx.settings.maxRetries) {
    node.status = 'pending';
    node.retry_at = iso(ctx.now + ctx.settings.retryBaseMs * 2 ** (node.attempts - 1));
  } else {
    node.status = 'failed';
  }
}

/**
 * Moves a task as far as its state allows: task deadline, dispatching ready
 * subtasks (and retries that are due), publishing again jobs a dead dispatcher claimed but never
 * marked sent, re-planning failed subtasks, and finishing. Pure: the caller writes the returned
 * view with compare-and-set and, only if that wins, performs the actions.
 */
export function advance(stored: TaskView, ctx: Ctx): Step {
  const v = withPlan(stored);
  if (isTerminalStatus(v.status)) return { view: stored, actions: [] };
  // A task waiting for its user is not running late: the wait is added to its deadline when answered.
  if (v.deadline_at && v.status !== 'input_required' && ctx.now >= Date.parse(v.deadline_at)) {
    const step = finish(
      fail(
        { ...v, ...(v.plan ? { plan: structuredClone(v.plan) } : {}) },
        wireError('task_timeout', `the task did not finish by its deadline ${v.deadline_at}`, {
          deadline_at: v.deadline_at,
          ...(v.plan ? { report: report(v.plan) } : {}),
        }),
      ),
      ctx,
    );
    step.actions.push({ kind: 'stop_jobs', reason: 'task timed out' });
    return step;
  }
  if (!v.plan) return { view: stored, actions: [] };
  const plan = structuredClone(v.plan);
  const view: TaskView = { ...v, plan };
  const actions: Action[] = [];
  const stale = (claimedAt: string | undefined) => claimedAt !== undefined && ctx.now - Date.parse(claimedAt) >= ctx.settings.redispatchAfterMs;

  if (plan.job && !plan.job.dispatched_at && stale(plan.job.claimed_at)) {
    actions.push({ kind: 'job', job: coordinationJob(view, plan.job, jobCtx(ctx)) });
  }
  if (plan.stage === 'reviewing' || plan.stage === 'composing' || plan.stage === 'done') return { view, actions };

  const byId = new Map(plan.subtasks.map((s) => [s.id, s]));
  for (const s of plan.subtasks) {
    if (s.status !== 'input_required' || !s.input || ctx.now < Date.parse(s.input.deadline_at)) continue;
    if (ctx.settings.inputTimeoutPolicy === 'continue') {
      actions.push(resume(view, s, NO_ANSWER, true, ctx));
    } else {
      s.status = 'failed';
      s.error = wireError('input_timeout', `nobody answered the question of subtask ${s.id} by ${s.input.deadline_at}`, {
        subtask_id: s.id,
        call_id: s.input.call_id,
        question: s.input.question,
        deadline_at: s.input.deadline_at,
      });
      delete s.input;
    }
    view.status = waiting(plan) ? 'input_required' : 'running';
  }
  for (const s of plan.subtasks) {
    // No timeout is counted here: a job queued behind the LLM cap has not started, and its
    // runtime stops it SUBTASK_TIMEOUT_MS after it does (timeout_ms), reporting subtask_timeout.
    if (s.status !== 'running') continue;
    if (!s.dispatched_at && stale(s.claimed_at)) {
      actions.push({ kind: 'job', job: subtaskJob(view, s, jobCtx(ctx)) });
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
    actions.push({ kind: 'job', job: subtaskJob(view, s, jobCtx(ctx)) });
  }

  if (plan.stage !== 'running') return { view, actions };
  const failed = plan.subtasks.find((s) => s.status === 'failed' && !s.replaced);
  if (failed) {
    const error = failed.error ?? wireError('internal', `subtask ${failed.id} failed without an error`);
    // A single-subtask task, or a refusal (permission, ownership, budget): a re-plan cannot help,
    // and the task ends with the subtask's own error, not a wrapper that hides it. So does an
    // answer the evidence gate refused: the task asked for evidence, and a reshuffled plan would
    // hand the same gap to the next subtask instead of reporting it.
    if (plan.origin === 'single' || isCallerFault(error) || error.code === 'unsupported_answer') {
      const own = plan.origin === 'single' ? error : { ...error, details: { ...error.details, subtask_id: failed.id, report: report(plan) } };
      const step = finish(fail(view, own), ctx);
      step.actions.unshift(...actions.filter((a) => a.kind !== 'job'));
      return step;
    }
    if (plan.replans >= ctx.settings.maxReplans) {
      const code = ctx.settings.maxReplans === 0 ? 'subtask_failed' : 'replan_exhausted';
      const step = finish(
        fail(
          view,
          wireError(code, `subtask ${failed.id} failed (${failed.error?.code ?? 'unknown'}: ${failed.error?.message ?? ''}) after ${plan.replans} re-plan(s)`, {
            subtask_id: failed.id,
            report: report(plan),
          }),
        ),
        ctx,
      );
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
    actions.push({ kind: 'job', job: coordinationJob(view, plan.job, jobCtx(ctx)) });
    return { view, actions };
  }

  const active = plan.subtasks.filter(isActive);
  if (active.length > 0 && active.every((s) => s.status === 'succeeded')) {
    const review = pendingReview(view, ctx.settings.reviewRounds);
    if (review) {
      // The round is counted in the write that claims its job: a dispatcher restarted after it neither repeats nor skips one.
      plan.review = { ...review, round: review.round + 1 };
      plan.stage = 'reviewing';
      plan.job = reviewJob(v.task_id, plan.review.round, 1, ctx.now);
      actions.push(
        { kind: 'review_started', data: { task_id: v.task_id, round: plan.review.round, subtasks: active.map((s) => s.id) } },
        { kind: 'job', job: coordinationJob(view, plan.job, jobCtx(ctx)) },
      );
      return { view, actions };
    }
    const sinks = active.filter((s) => !active.some((o) => o.depends_on.includes(s.id)));
    if (sinks.length === 1) return finish(complete(view, sinks[0]!.output ?? ''), ctx, actions);
    plan.stage = 'composing';
    plan.job = { job_id: `${v.task_id}-compose`, kind: 'compose', attempt: 1, claimed_at: iso(ctx.now) };
    actions.push({ kind: 'job', job: coordinationJob(view, plan.job, jobCtx(ctx)) });
  }
  return { view, actions };
}

/** What the model reads for a question nobody answered in time (ASK_USER_TIMEOUT_POLICY=continue). */
export const NO_ANSWER =
  'The user did not answer in time. Continue without the answer: make no assumption you cannot justify, and say what you could not settle.';

/** Whether any subtask waits for an answer. */
const waiting = (plan: PlanState) => plan.subtasks.some((s) => s.status === 'input_required');

/**
 * Gives a waiting subtask its answer: its next job (`<task>-<subtask>-<attempt>-input<round>`)
 * resumes from the checkpoint of the job that asked, and the task's deadline moves by the wait.
 */
function resume(view: TaskView, s: SubtaskState, answer: string, timedOut: boolean, ctx: Ctx): Action {
  const input = s.input!;
  s.input = { ...input, answer, ...(timedOut ? { timed_out: true } : {}) };
  s.status = 'running';
  s.job_id = `${view.task_id}-${s.id}-${s.attempts}-input${input.round}`;
  s.claimed_at = iso(ctx.now);
  delete s.dispatched_at;
  if (view.deadline_at) view.deadline_at = iso(Date.parse(view.deadline_at) + Math.max(0, ctx.now - Date.parse(input.asked_at)));
  return { kind: 'job', job: subtaskJob(view, s, jobCtx(ctx)) };
}

/**
 * The owner's answer to a question of the task (the oldest, or the one `callId` names). Pure like
 * `advance`; a task that waits for no such question is the caller's mistake, not a change.
 */
export function answerInput(stored: TaskView, o: { answer: string; callId?: string }, ctx: Ctx): Step | WireError {
  const v = withPlan(stored);
  const open = (v.plan?.subtasks ?? [])
    .filter((s) => s.status === 'input_required' && s.input && (o.callId === undefined || s.input.call_id === o.callId))
    .sort((a, b) => Date.parse(a.input!.asked_at) - Date.parse(b.input!.asked_at));
  if (isTerminalStatus(v.status) || open.length === 0) {
    return wireError('not_waiting_for_input', `task ${v.task_id} waits for no answer${o.callId ? ` to ${o.callId}` : ''}`, {
      task_id: v.task_id,
      status: v.status,
    });
  }
  const plan = structuredClone(v.plan!);
  const view: TaskView = { ...v, plan };
  const node = plan.subtasks.find((s) => s.id === open[0]!.id)!;
  const job = resume(view, node, o.answer, false, ctx);
  view.status = waiting(plan) ? 'input_required' : 'running';
  const next = advance(view, ctx);
  return { view: next.view, actions: [job, ...next.actions] };
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
  const r = plan?.review;
  const review = r?.accepted !== undefined && r.round > 0 ? { review: { accepted: r.accepted, rounds: r.round, ...(r.notes ? { notes: r.notes } : {}) } } : {};
  return { ...v, status: 'completed', result: { output, ...review }, ...(plan ? { plan } : {}) };
}

function fail(v: TaskView, error: WireError): TaskView {
  const plan = v.plan ? { ...v.plan, stage: 'done' as const } : undefined;
  if (plan) delete plan.job;
  return { ...v, status: 'failed', error, ...(plan ? { plan } : {}) };
}

function finish(v: TaskView, _ctx: Ctx, before: Action[] = []): Step {
  return { view: v, actions: [...before.filter((a) => a.kind !== 'job'), ...terminalActions(v)] };
}

/** The terminal event of an ended task (published by another replica if the one that ended it died first). */
export function terminalActions(v: TaskView, reason?: string): Action[] {
  const subtasks = v.plan && v.plan.origin !== 'single' ? { subtasks: outcomes(v.plan) } : {};
  if (v.status === 'completed' && v.result)
    return [{ kind: 'completed', userId: v.user_id, data: { task_id: v.task_id, result: v.result, usage: v.usage, ...subtasks } }];
  if (v.status === 'failed' && v.error)
    return [{ kind: 'failed', userId: v.user_id, data: { task_id: v.task_id, error: v.error, usage: v.usage, ...subtasks } }];
  if (v.status === 'cancelled') {
    const why = reason ?? (v.error?.message !== 'cancelled on request' ? v.error?.message : undefined);
    return [{ kind: 'cancelled', userId: v.user_id, data: { task_id: v.task_id, ...(why ? { reason: why } : {}) } }];
  }
  return [];
}
