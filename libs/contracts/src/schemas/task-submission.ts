import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { ReplaySource } from './recordings.js';
import { MAX_REVIEW_ROUNDS } from './review.js';

/** The CloudEvents `type` a task submission must carry. */
export const TASK_SUBMIT_TYPE = 'io.hermes.task.submit';

export const Priority = Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high')]);

export const TaskBudget = Type.Object(
  {
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, description: 'stop with budget_exceeded past this many tokens' })),
    max_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'agent loop steps per subtask' })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1000, maximum: 86_400_000 })),
  },
  { title: 'TaskBudget', additionalProperties: false },
);

/** What a team asks Hermes to do: the `data` of a submission event and the body of `POST /v1/tasks`. */
export const TaskRequest = Type.Object(
  {
    user_id: Id,
    session_id: Type.Optional(Id),
    goal: Type.String({ minLength: 1, maxLength: 20_000, description: 'what the agent should achieve, in plain language' }),
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'structured inputs the goal refers to' })),
    tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 128,
        uniqueItems: true,
        description: 'allow-list of tool names; absent = every tool the user may use',
      }),
    ),
    priority: Type.Optional(Priority),
    budget: Type.Optional(TaskBudget),
    stream: Type.Optional(Type.Boolean({ description: 'emit token deltas as step events' })),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 1024 }), {
        description: 'opaque labels kept with the task: returned in its view (GET /v1/tasks/:id, tasks.get) as `options.metadata`',
      }),
    ),
    require_evidence: Type.Optional(
      Type.Boolean({
        description:
          'the final answer must cite tool results by call id with a fragment quoted from them; else the task ends unsupported_answer (docs/planning.md)',
      }),
    ),
    review: Type.Optional(
      Type.Boolean({
        description: "a reviewer checks the subtasks' outputs before the task completes and may send subtasks back (docs/planning.md#review)",
      }),
    ),
    review_rounds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_REVIEW_ROUNDS,
        description: "with review: how often the reviewer may send subtasks back (default: the dispatcher's REVIEW_ROUNDS)",
      }),
    ),
    record: Type.Optional(
      Type.Boolean({ description: 'record every LLM exchange and tool call of the task (docs/evals.md); off unless set here, for the user or globally' }),
    ),
    replay: Type.Optional(ReplaySource),
  },
  { title: 'TaskRequest', additionalProperties: false },
);
export type TaskRequest = Static<typeof TaskRequest>;

/**
 * A task submission as a structured-mode CloudEvent 1.0. Binary mode (`ce-*` NATS headers with
 * the request as the body) and structured mode with `data_base64` (the request as base64 UTF-8
 * JSON, as SDKs write binary data) are converted to this shape before validation.
 */
export const TaskSubmitEvent = Type.Object(
  {
    specversion: Type.Literal('1.0'),
    type: Type.Literal(TASK_SUBMIT_TYPE),
    source: Type.String({ minLength: 1, maxLength: 512, description: 'URI-reference naming the submitting team or system' }),
    id: Type.String({ minLength: 1, maxLength: 256, description: 'unique per source; (source, id) names the task' }),
    time: Type.Optional(Timestamp),
    datacontenttype: Type.Optional(
      Type.String({
        pattern: '^application/json\\s*(;.*)?$',
        description:
          'application/json; parameters are allowed (`charset=utf-8`, as SDKs write it), another charset is refused. The intake reads it case-insensitively and keeps the bare media type',
      }),
    ),
    dataschema: Type.Optional(Type.String()),
    subject: Type.Optional(Type.String()),
    traceparent: Type.Optional(Type.String({ description: 'W3C trace context (CloudEvents distributed tracing extension)' })),
    tracestate: Type.Optional(Type.String()),
    data: TaskRequest,
  },
  {
    title: 'TaskSubmitEvent',
    // CloudEvents lets producers add extension attributes; they are kept but must be scalars.
    additionalProperties: Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
  },
);
export type TaskSubmitEvent = Static<typeof TaskSubmitEvent>;
