import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, ValidationIssue } from './common.js';
import { PlanState, TaskInputRequest, TaskStatus } from './task-state.js';
import { TaskRequest } from './task-submission.js';
import { ApprovalDecision, ToolAuditRecord } from './tool-calls.js';
import { SessionMessagesReply } from './memory.js';
import { SessionDeleteReply } from './session-list.js';

/** The media type of every error the gateway answers (RFC 9457). */
export const PROBLEM_JSON = 'application/problem+json';

/**
 * The problem type URI of a Hermes error code. A URN, not a URL: RFC 9457 lets a type be a
 * non-resolvable URI, and clients must not dereference it; the code alone identifies the problem.
 */
export const problemType = (code: string): string => `urn:hermes:problem:${code}`;

/** A short, fixed title per code ("not_found" → "Not found"), as RFC 9457 wants one title per type. */
export const problemTitle = (code: string): string => {
  const words = code.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * An error answered by the gateway: RFC 9457 problem details (`type`, `title`, `status`,
 * `detail`) with Hermes's members: the same `code` as on the bus, `retryable`, the validation
 * `issues`, and `details` where the code has them (payload limits, the conflicting task).
 */
export const ProblemDetails = Type.Object(
  {
    type: Type.String({ description: 'problem type URI: urn:hermes:problem:<code>' }),
    title: Type.String({ description: 'short summary of the problem type (fixed per code)' }),
    status: Type.Integer({ minimum: 400, maximum: 599, description: 'the HTTP status of this response' }),
    detail: Type.String({ description: 'what went wrong this time, for a human' }),
    code: Type.String({ description: 'stable, machine-readable code, the same as on the bus (e.g. "invalid_payload", "not_found")' }),
    retryable: Type.Boolean({ description: 'whether sending the same request again may succeed' }),
    issues: Type.Optional(Type.Array(ValidationIssue, { description: 'every problem found in the request (JSON Pointer path and message)' })),
    details: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'code-specific facts (the limit and path of a payload_limit, the task of a duplicate_conflict)',
      }),
    ),
  },
  { title: 'ProblemDetails', additionalProperties: false },
);
export type ProblemDetails = Static<typeof ProblemDetails>;

/** `GET /v1/tasks/:id/plan`: the task's plan DAG (subtasks, dependencies, states, attempts, re-plans); null before planning. */
export const TaskPlanView = Type.Object(
  {
    task_id: Id,
    status: TaskStatus,
    plan: Type.Union([PlanState, Type.Null()]),
  },
  { title: 'TaskPlanView', additionalProperties: false },
);
export type TaskPlanView = Static<typeof TaskPlanView>;

/** `GET /v1/tasks/:id/audit`: the toolbus's audit records of the task's tool calls, one per attempt, oldest first. */
export const TaskAuditView = Type.Object({ task_id: Id, records: Type.Array(ToolAuditRecord) }, { title: 'TaskAuditView', additionalProperties: false });
export type TaskAuditView = Static<typeof TaskAuditView>;

/** One LLM pool of the cluster-wide semaphore, as `hermes llm status` shows it. */
export const LlmPoolStatus = Type.Object(
  {
    pool: Type.String(),
    capacity: Type.Integer({ minimum: 0, description: 'permits the pool has now (may be changed at run time)' }),
    configured_capacity: Type.Integer({ minimum: 0 }),
    in_use: Type.Integer({ minimum: 0, description: 'LLM calls in flight' }),
    waiters: Type.Integer({ minimum: 0, description: 'calls waiting for a permit' }),
    backoff_until: Type.Union([Timestamp, Type.Null()], { description: 'the pool holds new calls back until then (after 429s or outages)' }),
    backoff_reason: Type.Union([Type.String(), Type.Null()]),
    consecutive_failures: Type.Integer({ minimum: 0 }),
    tpm: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'token budget per minute; null without one' }),
    tokens_available: Type.Union([Type.Number(), Type.Null()], { description: 'tokens left in the budget right now' }),
  },
  { title: 'LlmPoolStatus', additionalProperties: false },
);
export type LlmPoolStatus = Static<typeof LlmPoolStatus>;

export const LlmPoolsReply = Type.Object({ pools: Type.Array(LlmPoolStatus) }, { title: 'LlmPoolsReply', additionalProperties: false });
export type LlmPoolsReply = Static<typeof LlmPoolsReply>;

/** The answer to `POST /v1/tasks`: the task id (known before the dispatcher accepted it) and where to follow it. */
export const TaskSubmitted = Type.Object(
  {
    task_id: Id,
    status: Type.Literal('submitted'),
    duplicate: Type.Boolean({ description: 'true when this Idempotency-Key already named a task (200, nothing published again)' }),
    links: Type.Object({ self: Type.String(), events: Type.String() }, { additionalProperties: false }),
  },
  { title: 'TaskSubmitted', additionalProperties: false },
);
export type TaskSubmitted = Static<typeof TaskSubmitted>;

/** The body of `POST /v1/tasks`: a task request whose `user_id` defaults to the API key's user. */
export const HttpTaskRequest = Type.Object(
  { ...TaskRequest.properties, user_id: Type.Optional(Id) },
  {
    title: 'HttpTaskRequest',
    additionalProperties: false,
    description: "a TaskRequest; user_id defaults to the API key's user (another user's needs an admin key)",
  },
);
export type HttpTaskRequest = Static<typeof HttpTaskRequest>;

/** The body of `POST /v1/tasks/:id/approvals/:call_id`; who decides comes from the API key. */
export const ApprovalDecisionBody = Type.Object(
  { decision: ApprovalDecision.properties.decision, reason: ApprovalDecision.properties.reason },
  { title: 'ApprovalDecisionBody', additionalProperties: false },
);
export type ApprovalDecisionBody = Static<typeof ApprovalDecisionBody>;

/** `POST /v1/tasks/:id/input`: the answer to the question the task asked (ask_user). */
export const TaskInputBody = Type.Object(
  { answer: TaskInputRequest.properties.answer, call_id: TaskInputRequest.properties.call_id },
  { title: 'TaskInputBody', additionalProperties: false },
);
export type TaskInputBody = Static<typeof TaskInputBody>;

/** `GET /v1/users/:user/sessions/:id`: the session's latest messages, oldest first. */
export const SessionMessagesView = Type.Object(
  { session_id: Id, messages: SessionMessagesReply.properties.messages },
  { title: 'SessionMessagesView', additionalProperties: false },
);

/** `DELETE /v1/users/:user/sessions/:id`: what was removed. */
export const SessionDeletedView = Type.Object(
  { session_id: Id, ...SessionDeleteReply.properties },
  { title: 'SessionDeletedView', additionalProperties: false },
);

/** `GET /v1/me`: who the API key acts for (the console shows it and offers admin views by it). */
export const CallerView = Type.Object(
  {
    user_id: Id,
    team: Type.String(),
    roles: Type.Array(Type.String()),
    is_admin: Type.Boolean({ description: "role admin: acts on every user's tasks, sessions and approvals of the team" }),
    approves: Type.Boolean({ description: 'may decide approvals at all (GET /v1/approvals lists the ones the caller may decide)' }),
    approves_team: Type.Boolean({ description: "may decide approvals of other users' tasks of the team: admin, or a role of HERMES_APPROVER_ROLES" }),
  },
  { title: 'CallerView', additionalProperties: false },
);
export type CallerView = Static<typeof CallerView>;
