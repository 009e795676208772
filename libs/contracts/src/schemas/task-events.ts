import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Id, Timestamp, TokenUsage, ValidationIssue, WireError } from './common.js';
import { Team } from '../owner.js';
import { ABSOLUTE_URI_PATTERN } from '../event-source.js';
import { ReviewNote, ReviewOutcome } from './review.js';

/** Every event kind a submitter can see on `<prefix>.tasks.events.<task_id>`. */
export const TASK_EVENT_KINDS = [
  'accepted',
  'rejected',
  'planned',
  'started',
  'step',
  'input_required',
  'review_started',
  'review_verdict',
  'completed',
  'failed',
  'cancelled',
] as const;
export type TaskEventKind = (typeof TASK_EVENT_KINDS)[number];
/** Kinds after which no further event is published for the task. */
export const TERMINAL_EVENT_KINDS: readonly TaskEventKind[] = ['rejected', 'completed', 'failed', 'cancelled'];

export const taskEventType = (kind: TaskEventKind) => `io.hermes.task.${kind}` as const;
/** The title (and component name in the AsyncAPI document) of a kind's `data` schema: `TaskAcceptedData`. */
export const taskEventDataTitle = (kind: TaskEventKind) => `Task${pascal(kind)}Data`;
const pascal = (kind: string) => kind.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

const SourceEventRef = Type.Object(
  { source: Type.Optional(Type.String()), id: Type.Optional(Type.String()) },
  { additionalProperties: false, description: 'the submission event this task came from' },
);

export const AcceptedData = Type.Object(
  {
    task_id: Id,
    user_id: Id,
    team: Type.Optional(Team),
    session_id: Id,
    goal: Type.String(),
    source_event: SourceEventRef,
    trace_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$', description: "the task's OpenTelemetry trace id: search for it in the tracing backend" })),
    queue: Type.Optional(
      Type.Object(
        {
          jobs_ahead: Type.Integer({ minimum: 0, description: 'runtime jobs waiting that no runtime has taken yet' }),
          estimated_wait_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
            description: 'how long until the task starts at the pace runtimes took jobs lately; null while they took none',
          }),
        },
        {
          title: 'TaskQueueEstimate',
          additionalProperties: false,
          description: 'present when the task waits in a queue at least ADMISSION_NOTICE_WAIT_MS long',
        },
      ),
    ),
  },
  { title: 'TaskAcceptedData', additionalProperties: false },
);
export const RejectedData = Type.Object(
  {
    task_id: Type.Optional(Id),
    source_event: SourceEventRef,
    error: WireError,
    issues: Type.Array(ValidationIssue),
    submission: Type.Optional(
      Type.Object(
        {
          stream_seq: Type.Integer({ minimum: 1, description: 'sequence of the rejected message in the submit stream' }),
          msg_id: Type.Optional(Type.String({ description: 'its Nats-Msg-Id header, when it had one' })),
        },
        { additionalProperties: false, description: 'the published message this rejection answers' },
      ),
    ),
  },
  { title: 'TaskRejectedData', additionalProperties: false },
);
export const PlannedData = Type.Object(
  {
    task_id: Id,
    subtasks: Type.Array(
      Type.Object(
        { id: Id, intent: Type.String(), depends_on: Type.Array(Id), tools: Type.Optional(Type.Array(Type.String())) },
        { additionalProperties: false },
      ),
      { description: 'the new subtasks: the whole plan, or after a re-plan the replacements' },
    ),
    replans: Type.Integer({ minimum: 0, description: '0 for the first plan, n for the n-th re-plan' }),
    replaced: Type.Optional(Type.Array(Id, { description: 're-plans: the subtasks these replace (the failed one and its dependents)' })),
  },
  { title: 'TaskPlannedData', additionalProperties: false },
);
export const StartedData = Type.Object(
  { task_id: Id, subtask_id: Id, attempt: Type.Integer({ minimum: 1 }) },
  { title: 'TaskStartedData', additionalProperties: false },
);
export const StepKind = Type.Union([
  Type.Literal('llm_call'),
  Type.Literal('tool_call'),
  Type.Literal('tool_result'),
  Type.Literal('approval_needed'),
  Type.Literal('token_delta'),
  Type.Literal('waiting'),
  Type.Literal('compacted'),
  Type.Literal('evidence_refused'),
  Type.Literal('warning'),
]);
export const StepData = Type.Object(
  {
    task_id: Id,
    subtask_id: Id,
    step: Type.Integer({ minimum: 1 }),
    kind: StepKind,
    model: Type.Optional(Type.String()),
    usage: Type.Optional(TokenUsage),
    detail: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'TaskStepData', additionalProperties: false },
);
export const TaskResult = Type.Object(
  {
    output: Type.String({ description: 'the final answer, as text' }),
    data: Type.Optional(Type.Unknown({ description: 'structured result, when the task produced one' })),
    review: Type.Optional(ReviewOutcome),
  },
  { title: 'TaskResult', additionalProperties: false },
);
export type TaskResult = Static<typeof TaskResult>;
/** Where a subtask stands (see docs/planning.md for its transitions). */
export const SubtaskStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('input_required'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('skipped'),
]);
export const SubtaskOutcome = Type.Object(
  {
    id: Id,
    intent: Type.String(),
    status: SubtaskStatus,
    attempts: Type.Integer({ minimum: 0 }),
    error: Type.Optional(WireError),
    usage: Type.Optional(TokenUsage),
  },
  { title: 'SubtaskOutcome', additionalProperties: false },
);
export type SubtaskOutcome = Static<typeof SubtaskOutcome>;
export const CompletedData = Type.Object(
  {
    task_id: Id,
    result: TaskResult,
    usage: TokenUsage,
    subtasks: Type.Optional(Type.Array(SubtaskOutcome, { description: 'planned tasks: how each subtask ended' })),
  },
  { title: 'TaskCompletedData', additionalProperties: false },
);
export const FailedData = Type.Object(
  {
    task_id: Id,
    error: WireError,
    usage: Type.Optional(TokenUsage),
    subtasks: Type.Optional(Type.Array(SubtaskOutcome, { description: 'planned tasks: how each subtask ended' })),
  },
  { title: 'TaskFailedData', additionalProperties: false },
);
/** A subtask's model asked the user a question (`ask_user`); the task waits for `POST /v1/tasks/:id/input`. */
export const InputRequiredData = Type.Object(
  {
    task_id: Id,
    subtask_id: Id,
    call_id: Type.String({ description: 'the ask_user call the answer resumes' }),
    question: Type.String(),
    choices: Type.Optional(Type.Array(Type.String())),
    deadline_at: Timestamp,
  },
  { title: 'TaskInputRequiredData', additionalProperties: false },
);
/** The reviewer was asked to check the subtasks' outputs (docs/planning.md#review). */
export const ReviewStartedData = Type.Object(
  {
    task_id: Id,
    round: Type.Integer({ minimum: 1, description: 'the n-th review of the task' }),
    subtasks: Type.Array(Id, { description: 'the subtasks whose outputs it reviews' }),
  },
  { title: 'TaskReviewStartedData', additionalProperties: false },
);
/** What the reviewer decided: accept (the task completes with its answer) or revise (the named subtasks run once more). */
export const ReviewVerdictData = Type.Object(
  {
    task_id: Id,
    round: Type.Integer({ minimum: 1 }),
    verdict: Type.Union([Type.Literal('accept'), Type.Literal('revise')]),
    subtasks: Type.Optional(Type.Array(ReviewNote, { description: 'revise: the subtasks sent back and the notes each gets' })),
    exhausted: Type.Optional(Type.Boolean({ description: 'revise with no round left: the task completes with the last outputs composed' })),
  },
  { title: 'TaskReviewVerdictData', additionalProperties: false },
);
export const CancelledData = Type.Object({ task_id: Id, reason: Type.Optional(Type.String()) }, { title: 'TaskCancelledData', additionalProperties: false });

function eventOf<K extends TaskEventKind, D extends TSchema>(kind: K, data: D) {
  return Type.Object(
    {
      specversion: Type.Literal('1.0'),
      id: Type.String({ minLength: 1, description: 'unique per event; stable across redeliveries' }),
      source: Type.String({
        minLength: 1,
        description:
          'URI of the emitting service: `<HERMES_EVENT_SOURCE>/<service>` (default `urn:hermes:<prefix>/<service>`); events of releases before it read `hermes/<service>`',
      }),
      type: Type.Literal(taskEventType(kind)),
      subject: Id,
      time: Timestamp,
      datacontenttype: Type.Literal('application/json'),
      dataschema: Type.Optional(
        Type.String({ pattern: ABSOLUTE_URI_PATTERN, description: `the published schema of data: the AsyncAPI document's ${taskEventDataTitle(kind)}` }),
      ),
      traceparent: Type.Optional(
        Type.String({
          pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
          description: 'W3C trace context (CloudEvents distributed tracing extension); the NATS headers carry the same',
        }),
      ),
      tracestate: Type.Optional(Type.String({ maxLength: 512, description: 'W3C tracestate (CloudEvents distributed tracing extension)' })),
      data,
    },
    { title: `Task${pascal(kind)}Event`, additionalProperties: false },
  );
}

export const TaskAcceptedEvent = eventOf('accepted', AcceptedData);
export const TaskRejectedEvent = eventOf('rejected', RejectedData);
export const TaskPlannedEvent = eventOf('planned', PlannedData);
export const TaskStartedEvent = eventOf('started', StartedData);
export const TaskStepEvent = eventOf('step', StepData);
export const TaskInputRequiredEvent = eventOf('input_required', InputRequiredData);
export const TaskReviewStartedEvent = eventOf('review_started', ReviewStartedData);
export const TaskReviewVerdictEvent = eventOf('review_verdict', ReviewVerdictData);
export const TaskCompletedEvent = eventOf('completed', CompletedData);
export const TaskFailedEvent = eventOf('failed', FailedData);
export const TaskCancelledEvent = eventOf('cancelled', CancelledData);

/** Any event on a task's event subject, as a structured CloudEvent; `subject` is the task id. */
export const TaskEvent = Type.Union(
  [
    TaskAcceptedEvent,
    TaskRejectedEvent,
    TaskPlannedEvent,
    TaskStartedEvent,
    TaskStepEvent,
    TaskInputRequiredEvent,
    TaskReviewStartedEvent,
    TaskReviewVerdictEvent,
    TaskCompletedEvent,
    TaskFailedEvent,
    TaskCancelledEvent,
  ],
  { title: 'TaskEvent' },
);
export type TaskEvent = Static<typeof TaskEvent>;

/** Maps an event kind to the TypeScript type of its `data`. */
export interface TaskEventDataByKind {
  accepted: Static<typeof AcceptedData>;
  rejected: Static<typeof RejectedData>;
  planned: Static<typeof PlannedData>;
  started: Static<typeof StartedData>;
  step: Static<typeof StepData>;
  input_required: Static<typeof InputRequiredData>;
  review_started: Static<typeof ReviewStartedData>;
  review_verdict: Static<typeof ReviewVerdictData>;
  completed: Static<typeof CompletedData>;
  failed: Static<typeof FailedData>;
  cancelled: Static<typeof CancelledData>;
}
