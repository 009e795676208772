import { JOB_PRIORITY_MAX, ownerOf, teamField, type CoordinationJob, type RuntimeJob, type SubtaskState, type TaskView } from '@hermes/contracts';

/** What a job is built from besides the task: the dispatcher's view of the user's roles and plan limits. */
export interface JobContext {
  roles: string[];
  maxSubtasks: number;
  /** SUBTASK_TIMEOUT_MS: carried by each agent job, whose runtime counts it from the job's start. */
  subtaskTimeoutMs: number;
}

/**
 * A dependency output travels in the job that needs it (not through working memory). Outputs are
 * kept whole up to this many characters; a longer one is cut with a marker the model can see, so
 * one verbose subtask cannot blow a dependent's job past the bus's payload limit.
 */
export const MAX_DEPENDENCY_OUTPUT_CHARS = 64_000;

/**
 * The one place a runtime job is built: every job of a task, whatever its kind, carries the
 * task's identity, the user's roles from the dispatcher's directory (never the submitter's own
 * claim) and the task's options. Built from the stored state alone, so any replica can publish
 * a job again after another died.
 */
function jobOf(
  v: TaskView,
  ctx: JobContext,
  job: Pick<RuntimeJob, 'job_id' | 'subtask_id' | 'goal' | 'model_role' | 'kind' | 'inputs' | 'tools' | 'timeout_ms' | 'require_evidence' | 'input_answer'>,
  opening: boolean,
): RuntimeJob {
  const o = v.options ?? {};
  return {
    priority: jobPriority(v, opening),
    task_id: v.task_id,
    user_id: v.user_id,
    ...teamField(ownerOf(v).team),
    roles: ctx.roles,
    session_id: v.session_id,
    ...job,
    ...(job.inputs === undefined ? {} : { inputs: job.inputs }),
    ...(job.tools === undefined ? {} : { tools: job.tools }),
    ...(o.budget ? { budget: o.budget } : {}),
    ...(o.stream !== undefined ? { stream: o.stream } : {}),
    // Recording and replay are per task: every job of it (plan, subtasks, compose) is recorded or replayed.
    ...(o.record !== undefined ? { record: o.record } : {}),
    ...(o.replay ? { replay: o.replay } : {}),
  };
}

const TASK_PRIORITY = { low: 0, normal: 1, high: 2 } as const;

/**
 * A job's priority: the task's, and one more for anything but the task's opening job (its first
 * plan, or PLAN_MODE=single's first attempt). Work of a task already running goes ahead of new
 * tasks, so under overload tasks finish instead of all of them crawling; the LLM semaphore ages
 * waiters, so new tasks still start.
 */
export function jobPriority(v: TaskView, opening: boolean): number {
  return Math.min(JOB_PRIORITY_MAX, TASK_PRIORITY[v.options?.priority ?? 'normal'] + (opening ? 0 : 1));
}

/** The agent job of one subtask (a planned one, or PLAN_MODE=single's whole goal). */
export function subtaskJob(v: TaskView, s: SubtaskState, ctx: JobContext): RuntimeJob {
  const o = v.options ?? {};
  const tools = s.tools ?? o.tools;
  const common = {
    job_id: s.job_id!,
    subtask_id: s.id,
    model_role: 'worker' as const,
    kind: 'agent' as const,
    timeout_ms: ctx.subtaskTimeoutMs,
    ...(tools ? { tools } : {}),
    ...(o.require_evidence ? { require_evidence: true } : {}),
    ...(s.input?.answer !== undefined
      ? {
          input_answer: {
            from_job: s.input.asked_by,
            call_id: s.input.call_id,
            answer: s.input.answer,
            ...(s.input.timed_out ? { timed_out: true } : {}),
            ...(s.input.usage_total ? { usage_before: s.input.usage_total } : {}),
          },
        }
      : {}),
  };
  if (v.plan?.origin === 'single') {
    const opening = s.attempts <= 1 && s.input === undefined;
    return jobOf(v, ctx, { ...common, goal: v.goal, ...(o.inputs ? { inputs: o.inputs } : {}) }, opening);
  }
  const outputs = new Map((v.plan?.subtasks ?? []).map((d) => [d.id, d.output]));
  return jobOf(
    v,
    ctx,
    {
      ...common,
      goal: s.intent,
      inputs: {
        task_goal: v.goal,
        ...(o.inputs ? { task_inputs: o.inputs } : {}),
        ...(s.inputs ? { subtask_inputs: s.inputs } : {}),
        ...(s.depends_on.length ? { dependencies: Object.fromEntries(s.depends_on.map((id) => [id, capped(outputs.get(id) ?? '')])) } : {}),
        // Sent back by the reviewer: the attempt it reviewed and what to change.
        ...(s.revision ? { review: { notes: s.revision.notes, previous_output: capped(s.revision.previous_output) } } : {}),
      },
    },
    false,
  );
}

/** A planning, composing or reviewing job. */
export function coordinationJob(v: TaskView, job: CoordinationJob, ctx: JobContext): RuntimeJob {
  const o = v.options ?? {};
  const plan = v.plan!;
  const succeeded = () =>
    Object.fromEntries(plan.subtasks.filter((s) => s.status === 'succeeded').map((s) => [s.id, { intent: s.intent, output: capped(s.output ?? '') }]));
  if (job.kind === 'compose') {
    return jobOf(
      v,
      ctx,
      {
        job_id: job.job_id,
        subtask_id: 'compose',
        goal: v.goal,
        model_role: 'worker',
        kind: 'compose',
        inputs: { subtask_outputs: succeeded() },
      },
      false,
    );
  }
  if (job.kind === 'review') {
    const review = plan.review;
    return jobOf(
      v,
      ctx,
      {
        job_id: job.job_id,
        subtask_id: `review${review?.round ?? 1}`,
        goal: v.goal,
        model_role: 'reviewer',
        kind: 'review',
        inputs: {
          subtask_outputs: succeeded(),
          round: review?.round ?? 1,
          // The last round cannot send anything back: its revise verdict ends the review unaccepted.
          may_revise: (review?.round ?? 1) <= (review?.rounds ?? 0),
          ...(job.errors ? { invalid_verdict_errors: job.errors } : {}),
        },
      },
      false,
    );
  }
  const failedId = job.replacing?.[0];
  const failed = failedId ? plan.subtasks.find((s) => s.id === failedId) : undefined;
  const inputs: Record<string, unknown> = {
    max_subtasks: ctx.maxSubtasks,
    ...(o.inputs ? { task_inputs: o.inputs } : {}),
    ...(job.errors ? { invalid_plan_errors: job.errors } : {}),
    ...(job.purpose === 'replan'
      ? {
          replan: {
            replace: job.replacing ?? [],
            failed: failed ? { id: failed.id, intent: failed.intent, error: failed.error } : undefined,
            completed: succeeded(),
            existing_ids: plan.subtasks.map((s) => s.id),
          },
        }
      : {}),
  };
  return jobOf(
    v,
    ctx,
    {
      job_id: job.job_id,
      subtask_id: job.purpose === 'replan' ? `replan${plan.replans + 1}` : 'plan',
      goal: v.goal,
      model_role: 'planner',
      kind: 'plan',
      inputs,
      ...(o.tools ? { tools: o.tools } : {}),
    },
    job.purpose !== 'replan' && job.attempt <= 1,
  );
}

function capped(output: string): string {
  if (output.length <= MAX_DEPENDENCY_OUTPUT_CHARS) return output;
  return `${output.slice(0, MAX_DEPENDENCY_OUTPUT_CHARS)}\n[… ${output.length - MAX_DEPENDENCY_OUTPUT_CHARS} more characters cut]`;
}
