import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TokenUsage, WireError } from './common.js';
import { Team } from '../owner.js';
import { SubtaskStatus, TaskResult } from './task-events.js';
import { TaskBudget, Priority } from './task-submission.js';
import { ReplaySource } from './recordings.js';
import { MAX_REVIEW_ROUNDS, ReviewNote } from './review.js';

export const TaskStatus = Type.Union([
  Type.Literal('accepted'),
  Type.Literal('running'),
  Type.Literal('input_required'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export type TaskStatus = Static<typeof TaskStatus>;

/** Statuses a task never leaves; the dispatcher publishes the matching event once, on entering one. */
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

/** Whether a task in this status has ended (nothing runs or is published for it any more). */
export function isTerminalStatus(status: string): boolean {
  return (TERMINAL_TASK_STATUSES as readonly string[]).includes(status);
}

// Defined beside the events (a subtask's outcome carries it); the state's own name for it.
export { SubtaskStatus };
export type SubtaskStatus = Static<typeof SubtaskStatus>;

/** A question a subtask's model asked with `ask_user`, and (once given) the answer its next job resumes with. */
export const InputWait = Type.Object(
  {
    call_id: Type.String({ description: 'the ask_user tool call id' }),
    question: Type.String(),
    choices: Type.Optional(Type.Array(Type.String())),
    asked_by: Id,
    asked_at: Timestamp,
    deadline_at: Timestamp,
    round: Type.Integer({ minimum: 1, description: "the subtask's n-th question: its resuming job is <task>-<subtask>-<attempt>-input<round>" }),
    answer: Type.Optional(Type.String()),
    usage_total: Type.Optional(TokenUsage),
    timed_out: Type.Optional(Type.Boolean({ description: 'ASK_USER_TIMEOUT_POLICY=continue: nobody answered in time' })),
  },
  { title: 'InputWait', additionalProperties: false },
);
export type InputWait = Static<typeof InputWait>;

/** One node of a task's plan and where it stands. */
export const SubtaskState = Type.Object(
  {
    id: Id,
    intent: Type.String(),
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    depends_on: Type.Array(Id),
    tools: Type.Optional(Type.Array(Type.String())),
    status: SubtaskStatus,
    attempts: Type.Integer({ minimum: 0, description: 'jobs dispatched for this subtask (retries included)' }),
    generation: Type.Integer({ minimum: 0, description: 'the re-plan that created this subtask (0: the first plan)' }),
    job_id: Type.Optional(Id),
    claimed_at: Type.Optional(Timestamp),
    dispatched_at: Type.Optional(Timestamp),
    retry_at: Type.Optional(Timestamp),
    output: Type.Optional(Type.String()),
    error: Type.Optional(WireError),
    usage: Type.Optional(TokenUsage),
    replaced: Type.Optional(Type.Boolean({ description: 'a failed subtask whose re-plan has been asked for' })),
    input: Type.Optional(InputWait),
    input_rounds: Type.Optional(Type.Integer({ minimum: 1, description: 'questions this subtask has asked' })),
    revision: Type.Optional(
      Type.Object(
        { round: Type.Integer({ minimum: 1 }), notes: Type.String(), previous_output: Type.String() },
        { additionalProperties: false, description: 'a subtask the reviewer sent back: its next job gets the notes and the output they are about' },
      ),
    ),
  },
  { title: 'SubtaskState', additionalProperties: false },
);
export type SubtaskState = Static<typeof SubtaskState>;

/** A planning, composing or reviewing job the dispatcher is waiting for. */
export const CoordinationJob = Type.Object(
  {
    job_id: Id,
    kind: Type.Union([Type.Literal('plan'), Type.Literal('compose'), Type.Literal('review')]),
    purpose: Type.Optional(Type.Union([Type.Literal('plan'), Type.Literal('replan')])),
    attempt: Type.Integer({ minimum: 1, description: '2 when an invalid plan (or review verdict) was sent back' }),
    claimed_at: Timestamp,
    dispatched_at: Type.Optional(Timestamp),
    errors: Type.Optional(Type.Array(Type.String())),
    replacing: Type.Optional(Type.Array(Id, { description: 're-plans: the failed subtask and its dependents' })),
  },
  { title: 'CoordinationJob', additionalProperties: false },
);
export type CoordinationJob = Static<typeof CoordinationJob>;

/** A task's review (docs/planning.md#review): written in the same compare-and-set as the step it records, so a restarted dispatcher neither repeats nor skips a round. */
export const ReviewState = Type.Object(
  {
    rounds: Type.Integer({ minimum: 0, maximum: MAX_REVIEW_ROUNDS, description: 'how often the reviewer may send subtasks back' }),
    round: Type.Integer({ minimum: 0, description: 'reviews started so far' }),
    notes: Type.Optional(Type.Array(ReviewNote, { description: "the last revise verdict's notes" })),
    accepted: Type.Optional(Type.Boolean({ description: 'set when the review has ended: false when its rounds ran out' })),
  },
  { title: 'ReviewState', additionalProperties: false },
);
export type ReviewState = Static<typeof ReviewState>;

/** A task's plan, its subtasks' states and the job the dispatcher waits for (see docs/planning.md). */
export const PlanState = Type.Object(
  {
    stage: Type.Union([Type.Literal('planning'), Type.Literal('running'), Type.Literal('reviewing'), Type.Literal('composing'), Type.Literal('done')]),
    origin: Type.Optional(
      Type.Union([Type.Literal('planner'), Type.Literal('single')], {
        description: "planner (default): the planner made the subtasks; single: PLAN_MODE=single's one-node plan (the goal as one subtask, never re-planned)",
      }),
    ),
    subtasks: Type.Array(SubtaskState),
    replans: Type.Integer({ minimum: 0 }),
    job: Type.Optional(CoordinationJob),
    review: Type.Optional(ReviewState),
  },
  { title: 'PlanState', additionalProperties: false },
);
export type PlanState = Static<typeof PlanState>;

/** What a submission asked for beyond its goal, kept so any dispatcher replica can schedule its jobs. */
export const TaskOptions = Type.Object(
  {
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tools: Type.Optional(Type.Array(Type.String())),
    budget: Type.Optional(TaskBudget),
    stream: Type.Optional(Type.Boolean()),
    priority: Type.Optional(Priority),
    metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
    require_evidence: Type.Optional(Type.Boolean()),
    review: Type.Optional(Type.Boolean()),
    review_rounds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_REVIEW_ROUNDS })),
    record: Type.Optional(Type.Boolean()),
    replay: Type.Optional(ReplaySource),
  },
  { title: 'TaskOptions', additionalProperties: false },
);
export type TaskOptions = Static<typeof TaskOptions>;

/**
 * The task's place in its trace (W3C trace context of the span that accepted it). Jobs the
 * dispatcher publishes later (after a plan, on a retry, from the sweep) continue this trace, so a
 * task is one trace however long it runs; `trace_id` is what to search for in the tracing backend.
 */
export const TraceContext = Type.Object(
  {
    trace_id: Type.String({ pattern: '^[0-9a-f]{32}$' }),
    traceparent: Type.String(),
    tracestate: Type.Optional(Type.String()),
  },
  { title: 'TraceContext', additionalProperties: false },
);
export type TraceContext = Static<typeof TraceContext>;

/** A task as the dispatcher reports it (`GET /v1/tasks/:id`, `hermes status`). */
export const TaskView = Type.Object(
  {
    task_id: Id,
    user_id: Id,
    team: Type.Optional(Team),
    session_id: Id,
    goal: Type.String(),
    status: TaskStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
    source_event: Type.Object({ source: Type.String(), id: Type.String() }, { additionalProperties: false }),
    request_digest: Type.Optional(
      Type.String({ description: 'sha256 of the canonical JSON of the submitted request: a re-used event id with another body is a duplicate_conflict' }),
    ),
    submit_seq: Type.Optional(
      Type.Integer({ minimum: 1, description: 'stream sequence of the submission that created the task (tells its redelivery from a re-publish)' }),
    ),
    attempts: Type.Integer({ minimum: 0, description: 'runtime jobs started for this task, redeliveries included' }),
    usage: TokenUsage,
    result: Type.Optional(TaskResult),
    error: Type.Optional(WireError),
    options: Type.Optional(TaskOptions),
    deadline_at: Type.Optional(Timestamp),
    plan: Type.Optional(PlanState),
    trace_context: Type.Optional(TraceContext),
    roles: Type.Optional(
      Type.Array(Type.String(), {
        description: "the owner's roles as the dispatcher grants them now (in taskGet replies; not stored): what the toolbus checks tools against",
      }),
    ),
    waiting_for: Type.Optional(
      Type.String({
        description:
          "in a tasks.get answer, while one of the task's jobs waits out a dependency's outage (a restarting toolbus or memory: its last event is a `waiting` step): that service; absent once the job moves on. Never stored",
      }),
    ),
  },
  { title: 'TaskView', additionalProperties: false },
);
export type TaskView = Static<typeof TaskView>;

export const TaskGetRequest = Type.Object(
  {
    task_id: Id,
    user_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'when set, a task of another user is reported as not found' })),
  },
  { title: 'TaskGetRequest', additionalProperties: false },
);
export type TaskGetRequest = Static<typeof TaskGetRequest>;

export const TaskCancelRequest = Type.Object(
  {
    task_id: Id,
    user_id: Type.Optional(Type.Union([Id, Type.Null()], { description: "when set, only that user's task can be cancelled (others look not found)" })),
    reason: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { title: 'TaskCancelRequest', additionalProperties: false },
);
export type TaskCancelRequest = Static<typeof TaskCancelRequest>;

/** `POST /v1/tasks/:id/input`, `hermes answer`: the answer to the question a task waits on. */
export const TaskInputRequest = Type.Object(
  {
    task_id: Id,
    user_id: Type.Optional(Type.Union([Id, Type.Null()], { description: "when set, only that user's task can be answered (others look not found)" })),
    answer: Type.String({ minLength: 1, maxLength: 20_000 }),
    call_id: Type.Optional(Type.String({ maxLength: 256, description: 'which question, when several subtasks wait; default: the oldest' })),
  },
  { title: 'TaskInputRequest', additionalProperties: false },
);
export type TaskInputRequest = Static<typeof TaskInputRequest>;

/** Broadcast to every runtime when a task is cancelled, so it stops the task's jobs at once. */
export const TaskCancelledNotice = Type.Object(
  { task_id: Id, reason: Type.Optional(Type.String()) },
  { title: 'TaskCancelledNotice', additionalProperties: false },
);
export type TaskCancelledNotice = Static<typeof TaskCancelledNotice>;

/** `GET /v1/tasks`: a user's tasks (all users' when `user_id` is null), newest first. */
export const TaskListRequest = Type.Object(
  {
    user_id: Type.Union([Id, Type.Null()], { description: "whose tasks; null lists every user's (admin)" }),
    status: Type.Optional(TaskStatus),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 256, description: 'next_cursor of the previous page' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'only tasks created at or after this time (filtered before paging)' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'only tasks created at or before this time (filtered before paging)' })),
  },
  { title: 'TaskListRequest', additionalProperties: false },
);
export type TaskListRequest = Static<typeof TaskListRequest>;

export const TaskSummary = Type.Object(
  { task_id: Id, user_id: Id, team: Type.Optional(Team), goal: Type.String(), status: TaskStatus, created_at: Timestamp, updated_at: Timestamp },
  { title: 'TaskSummary', additionalProperties: false },
);
export type TaskSummary = Static<typeof TaskSummary>;

export const TaskListReply = Type.Object(
  { tasks: Type.Array(TaskSummary), next_cursor: Type.Optional(Type.String()) },
  { title: 'TaskListReply', additionalProperties: false },
);
export type TaskListReply = Static<typeof TaskListReply>;
