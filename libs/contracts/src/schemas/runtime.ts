import { Type, type Static } from '@sinclair/typebox';
import { Id, TokenUsage, WireError } from './common.js';
import { Team } from '../owner.js';
import { TaskBudget } from './task-submission.js';
import { ReplaySource } from './recordings.js';

export const ModelRole = Type.Union([Type.Literal('planner'), Type.Literal('worker'), Type.Literal('summarizer'), Type.Literal('reviewer')]);

/** What a runtime job does: an agent loop (default), one planning call, one call composing subtask outputs, or one call reviewing them. */
export const JobKind = Type.Union([Type.Literal('agent'), Type.Literal('plan'), Type.Literal('compose'), Type.Literal('review')]);

/** One node of a plan as the planner proposes it. */
export const PlanSubtask = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' }),
    intent: Type.String({ minLength: 1, maxLength: 4000, description: 'what this subtask must achieve, self-contained' }),
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    depends_on: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { description: 'ids of subtasks whose outputs this one needs' }),
    tools: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { description: 'suggested tools; must be within the task allow-list' })),
  },
  { title: 'PlanSubtask', additionalProperties: false },
);
export type PlanSubtask = Static<typeof PlanSubtask>;

/** A plan: a DAG of subtasks linked by `depends_on` (see docs/planning.md). */
export const Plan = Type.Object(
  {
    subtasks: Type.Array(PlanSubtask, { minItems: 1 }),
    review: Type.Optional(
      Type.Boolean({ description: "the plan ends in a review: a reviewer checks the subtasks' outputs before the task completes (docs/planning.md#review)" }),
    ),
  },
  { title: 'Plan', additionalProperties: false },
);
export type Plan = Static<typeof Plan>;

/** The highest job priority: a high-priority task's continuation. */
export const JOB_PRIORITY_MAX = 3;

/**
 * Jobs of this priority and up are published on runtimeJobsAhead, which runtimes pull before
 * runtimeJobs: the work of normal tasks already running and every high-priority job start before
 * new normal tasks, however deep their queue (docs/operations.md#admission).
 */
export const AHEAD_PRIORITY = 2;

/** Whether a job goes on the ahead lane (an absent priority is 1: not ahead). */
export const goesAhead = (job: { priority?: number }): boolean => (job.priority ?? 1) >= AHEAD_PRIORITY;

/** One unit of agent work for the runtime pool. */
export const RuntimeJob = Type.Object(
  {
    job_id: Id,
    task_id: Id,
    subtask_id: Id,
    user_id: Id,
    team: Type.Optional(Team),
    roles: Type.Optional(Type.Array(Type.String(), { description: "the user's roles, for tool permissions (default ['user'])" })),
    session_id: Id,
    goal: Type.String({ minLength: 1 }),
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tools: Type.Optional(Type.Array(Type.String())),
    budget: Type.Optional(TaskBudget),
    stream: Type.Optional(Type.Boolean()),
    model_role: ModelRole,
    kind: Type.Optional(JobKind),
    priority: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: JOB_PRIORITY_MAX,
        description:
          "order of service: jobs of 2 and up are published on runtimeJobsAhead, which runtimes take before runtimeJobs; the job's LLM calls wait for a permit by it (higher first; waiting raises it, LLM_PRIORITY_AGING_MS). The task's priority (low 0, normal 1, high 2), one more for the work of a task already running (its later subtasks, re-plans, compose, resumes and retries); absent = 1",
      }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'how long the job may run, counted from when a runtime starts it (not from when it was queued); past it the runtime stops it and reports a retryable subtask_timeout',
      }),
    ),
    require_evidence: Type.Optional(Type.Boolean({ description: "agent jobs: the task's evidence gate (the final answer cites tool results)" })),
    input_answer: Type.Optional(
      Type.Object(
        {
          from_job: Id,
          call_id: Type.String(),
          answer: Type.String(),
          timed_out: Type.Optional(Type.Boolean()),
          usage_before: Type.Optional(TokenUsage),
        },
        { additionalProperties: false, description: "a job resuming from from_job's checkpoint, its ask_user call answered" },
      ),
    ),
    record: Type.Optional(Type.Boolean({ description: 'the task asked to be recorded' })),
    replay: Type.Optional(ReplaySource),
  },
  { title: 'RuntimeJob', additionalProperties: false },
);
export type RuntimeJob = Static<typeof RuntimeJob>;

/** What the runtime reports back to the dispatcher when a job ends. */
export const RuntimeResult = Type.Object(
  {
    job_id: Id,
    task_id: Id,
    subtask_id: Id,
    attempt: Type.Integer({ minimum: 1, description: 'delivery attempt of the job that produced this result' }),
    outcome: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('input_required')]),
    question: Type.Optional(
      Type.Object(
        {
          call_id: Type.String(),
          question: Type.String(),
          choices: Type.Optional(Type.Array(Type.String())),
          usage_total: Type.Optional(TokenUsage),
        },
        { additionalProperties: false, description: 'input_required: what the model asked with ask_user (its turn is checkpointed under job_id)' },
      ),
    ),
    output: Type.Optional(Type.String()),
    error: Type.Optional(WireError),
    usage: TokenUsage,
    model: Type.Optional(Type.String()),
    plan: Type.Optional(
      Type.Unknown({ description: 'plan jobs: the JSON the planner answered, parsed but not yet validated (the dispatcher checks it against Plan)' }),
    ),
    verdict: Type.Optional(
      Type.Unknown({
        description: 'review jobs: the JSON the reviewer answered, parsed but not yet validated (the dispatcher checks it against ReviewVerdict)',
      }),
    ),
  },
  { title: 'RuntimeResult', additionalProperties: false },
);
export type RuntimeResult = Static<typeof RuntimeResult>;
