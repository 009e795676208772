import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { Team } from '../owner.js';
import { Condition, FieldPointer } from './condition.js';

/** The JSON Schema keywords a tool definition may use for its arguments (validated strictly). */
const JsonSchemaObject = Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments (type: object)' });

/** Units `unit` transforms convert between, by dimension (a value in another dimension is refused). */
export const UNIT_FACTORS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  duration: { ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 },
  length: { mm: 0.001, cm: 0.01, m: 1, km: 1000 },
  mass: { mg: 0.001, g: 1, kg: 1000, t: 1_000_000 },
  bytes: { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 },
};

/**
 * A light change from what a model sends to what the tool needs, run by the ToolBus before the
 * arguments are validated: `alias` moves a value sent under another name to `field`, `trim` cuts
 * surrounding white space, `case` lowers or raises a string, `unit` turns "90 min" or "1.5 h" into a
 * number in `unit` (a plain number is taken as already in it).
 */
export const ArgumentTransform = Type.Union(
  [
    Type.Object(
      { op: Type.Literal('alias'), field: FieldPointer, aliases: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 16 }) },
      { additionalProperties: false, description: 'names in the same object that mean `field`' },
    ),
    Type.Object({ op: Type.Literal('trim'), field: FieldPointer }, { additionalProperties: false }),
    Type.Object(
      { op: Type.Literal('case'), field: FieldPointer, to: Type.Union([Type.Literal('lower'), Type.Literal('upper')]) },
      { additionalProperties: false },
    ),
    Type.Object({ op: Type.Literal('unit'), field: FieldPointer, unit: Type.String({ minLength: 1, maxLength: 8 }) }, { additionalProperties: false }),
  ],
  { title: 'ArgumentTransform' },
);
export type ArgumentTransform = Static<typeof ArgumentTransform>;

/** A business pre-check over the validated arguments: they must satisfy `condition`, else the model gets `message`. */
export const ArgumentRule = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9_]{1,64}$' }),
    message: Type.String({ minLength: 1, maxLength: 500, description: 'what the model is told when the rule is broken' }),
    condition: Condition,
  },
  { title: 'ArgumentRule', additionalProperties: false },
);
export type ArgumentRule = Static<typeof ArgumentRule>;

/** A change the ToolBus made to the model's arguments before running the tool (told to the model and audited). */
export const ArgumentAdjustment = Type.Object(
  {
    path: Type.String({ description: 'JSON Pointer of the argument as the tool received it' }),
    transform: Type.Union([Type.Literal('alias'), Type.Literal('trim'), Type.Literal('case'), Type.Literal('unit'), Type.Literal('date_time')]),
    from: Type.String({ description: 'what the model sent (JSON, cut short), under its own name for an alias' }),
    to: Type.String({ description: 'what the tool received (JSON, cut short)' }),
  },
  { title: 'ArgumentAdjustment', additionalProperties: false },
);
export type ArgumentAdjustment = Static<typeof ArgumentAdjustment>;

/** A tool as a provider declares it. */
export const ToolSpec = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    description: Type.String({ maxLength: 2048 }),
    parameters: JsonSchemaObject,
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000, description: 'default 30000' })),
    require_confirm: Type.Optional(Type.Boolean({ description: 'a human approves each call before it runs' })),
    roles: Type.Optional(Type.Array(Type.String(), { description: 'caller needs at least one of these roles; absent = anyone' })),
    idempotent: Type.Optional(Type.Boolean({ description: 'same arguments, same result, no side effects: results may be cached' })),
    cache_ttl_ms: Type.Optional(Type.Integer({ minimum: 1, description: 'cache results of an idempotent tool this long' })),
    transforms: Type.Optional(Type.Array(ArgumentTransform, { maxItems: 64, description: 'run in order after repair, before validation' })),
    rules: Type.Optional(Type.Array(ArgumentRule, { maxItems: 64, description: 'checked after validation; every broken one is reported' })),
    require_evidence: Type.Optional(
      Type.Boolean({ description: "a job that called this tool must cite its results in the final answer (the runtime's evidence gate, docs/planning.md)" }),
    ),
  },
  { title: 'ToolSpec', additionalProperties: false },
);
export type ToolSpec = Static<typeof ToolSpec>;

/** One tool call from the agent loop; the idempotency key makes it run at most once. */
export const ToolCallRequest = Type.Object(
  {
    idempotency_key: Type.String({ minLength: 1, maxLength: 256, description: 'task:subtask:step:index — never the provider tool_call_id' }),
    task_id: Id,
    subtask_id: Id,
    step: Type.Integer({ minimum: 1 }),
    call_index: Type.Integer({ minimum: 0 }),
    tool_call_id: Type.String({ description: "the model's id, echoed for the tool message" }),
    user_id: Id,
    team: Type.Optional(Team),
    roles: Type.Array(Type.String()),
    allow: Type.Optional(Type.Array(Type.String(), { description: "the task's tool allow-list" })),
    tool: Type.String({ minLength: 1 }),
    arguments: Type.String({ maxLength: 1_000_000, description: 'the raw argument text the model produced' }),
    resumed: Type.Optional(Type.Boolean({ description: 'sent again by a runtime that resumed the job: the call has likely run, look for its record first' })),
  },
  { title: 'ToolCallRequest', additionalProperties: false },
);
export type ToolCallRequest = Static<typeof ToolCallRequest>;

export const ToolErrorCode = Type.Union([
  Type.Literal('tool_not_found'),
  Type.Literal('tool_forbidden'),
  Type.Literal('invalid_arguments'),
  Type.Literal('tool_timeout'),
  Type.Literal('tool_failed'),
  Type.Literal('provider_unavailable'),
  Type.Literal('approval_denied'),
  Type.Literal('approval_timeout'),
]);
export type ToolErrorCode = Static<typeof ToolErrorCode>;

/** A problem with one argument, written so the model can correct it. */
export const ArgumentIssue = Type.Object(
  {
    path: Type.String(),
    message: Type.String(),
    expected: Type.Optional(Type.String()),
    got: Type.Optional(Type.String()),
    rule: Type.Optional(Type.String({ description: 'the name of the tool rule the arguments break' })),
  },
  { title: 'ArgumentIssue', additionalProperties: false },
);

export const ToolError = Type.Object(
  {
    code: ToolErrorCode,
    message: Type.String(),
    retryable: Type.Boolean(),
    issues: Type.Optional(Type.Array(ArgumentIssue)),
  },
  { title: 'ToolError', additionalProperties: false },
);
export type ToolError = Static<typeof ToolError>;

/** The outcome of a tool call as the loop feeds it back to the model. */
export const ToolCallReply = Type.Object(
  {
    call_id: Type.String({ description: 'stable id of this call (for approvals and the audit)' }),
    status: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('pending_approval')]),
    result: Type.Optional(Type.Unknown({ description: 'JSON result; text results arrive as { result: "..." }' })),
    error: Type.Optional(ToolError),
    truncated: Type.Optional(Type.Boolean()),
    full_result_ref: Type.Optional(Type.String({ description: 'where the untruncated result is kept' })),
    replayed: Type.Optional(Type.Boolean({ description: 'already executed: the recorded result, not a second run' })),
    cached: Type.Optional(Type.Boolean()),
    duration_ms: Type.Optional(Type.Number()),
    approval_expires_at: Type.Optional(Timestamp),
    adjustments: Type.Optional(Type.Array(ArgumentAdjustment, { description: 'changes the ToolBus made to the arguments before the tool ran' })),
  },
  { title: 'ToolCallReply', additionalProperties: false },
);
export type ToolCallReply = Static<typeof ToolCallReply>;

export const ApprovalDecision = Type.Object(
  {
    task_id: Id,
    call_id: Type.String({ minLength: 1 }),
    decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
    decided_by: Type.String({
      minLength: 1,
      maxLength: 161,
      // The gateway sends the approver's owner key: a user id of the default team, `<team>/<user id>` of any other.
      pattern: '^([a-z0-9][a-z0-9-]{0,31}/)?[A-Za-z0-9][A-Za-z0-9_:@-]*$',
      description: 'who decided: a user id (default team) or `<team>/<user id>`',
    }),
    reason: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { title: 'ApprovalDecision', additionalProperties: false },
);
export type ApprovalDecision = Static<typeof ApprovalDecision>;

export const ApprovalDecisionReply = Type.Object(
  { call_id: Type.String(), status: Type.Union([Type.Literal('approved'), Type.Literal('denied')]) },
  { title: 'ApprovalDecisionReply', additionalProperties: false },
);
export type ApprovalDecisionReply = Static<typeof ApprovalDecisionReply>;

/** Which pending approvals to list: those of one owner's tasks, or (user_id null, for an admin) of every task of the team. */
export const ApprovalListRequest = Type.Object(
  {
    team: Team,
    user_id: Type.Union([Id, Type.Null()], { description: "only this user's tasks; null: every task of the team" }),
  },
  { title: 'ApprovalListRequest', additionalProperties: false },
);
export type ApprovalListRequest = Static<typeof ApprovalListRequest>;

/** A tool call waiting for a person: what would run, for whom, and until when it may be decided. */
export const PendingApproval = Type.Object(
  {
    call_id: Type.String({ minLength: 1 }),
    task_id: Id,
    subtask_id: Id,
    step: Type.Integer({ minimum: 1 }),
    team: Team,
    user_id: Id,
    tool: Type.String({ minLength: 1 }),
    arguments: Type.Record(Type.String(), Type.Unknown(), { description: 'the validated arguments the call runs with once approved' }),
    requested_at: Timestamp,
    expires_at: Timestamp,
  },
  { title: 'PendingApproval', additionalProperties: false },
);
export type PendingApproval = Static<typeof PendingApproval>;

export const ApprovalListReply = Type.Object(
  { approvals: Type.Array(PendingApproval, { description: 'oldest request first' }) },
  { title: 'ApprovalListReply', additionalProperties: false },
);
export type ApprovalListReply = Static<typeof ApprovalListReply>;

/** A change to a team's pending approvals: a call was parked (`pending`), or decided or timed out. */
export const ApprovalChanged = Type.Object(
  {
    task_id: Id,
    call_id: Type.String({ minLength: 1 }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('denied')], {
      description: 'denied also for a call whose approval time ran out',
    }),
  },
  { title: 'ApprovalChanged', additionalProperties: false },
);
export type ApprovalChanged = Static<typeof ApprovalChanged>;

/** A remote provider announces its tools (and again periodically, as a heartbeat). */
export const ToolProviderAnnouncement = Type.Object(
  {
    provider: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    instance_id: Type.String({ minLength: 1 }),
    tools: Type.Array(ToolSpec, { maxItems: 512 }),
    ttl_ms: Type.Integer({ minimum: 1000, description: 'forget these tools when no announcement came for this long' }),
  },
  { title: 'ToolProviderAnnouncement', additionalProperties: false },
);
export type ToolProviderAnnouncement = Static<typeof ToolProviderAnnouncement>;

/** The toolbus asks providers to announce themselves (sent at toolbus start). */
export const ToolProviderDiscover = Type.Object({ toolbus_id: Type.String() }, { title: 'ToolProviderDiscover', additionalProperties: false });

/** A call routed by the toolbus to the provider hosting the tool; arguments are already validated. */
export const ToolExecRequest = Type.Object(
  {
    idempotency_key: Type.String(),
    tool: Type.String(),
    arguments: Type.Record(Type.String(), Type.Unknown()),
    context: Type.Object({ task_id: Id, user_id: Id, roles: Type.Array(Type.String()) }, { additionalProperties: false }),
  },
  { title: 'ToolExecRequest', additionalProperties: false },
);
export type ToolExecRequest = Static<typeof ToolExecRequest>;

export const ToolExecReply = Type.Object({ result: Type.Unknown() }, { title: 'ToolExecReply', additionalProperties: false });

/** One audit record per tool call attempt, on `<prefix>.toolbus.audit.<task_id>`. */
export const ToolAuditRecord = Type.Object(
  {
    time: Timestamp,
    call_id: Type.String(),
    idempotency_key: Type.String(),
    task_id: Id,
    subtask_id: Id,
    step: Type.Integer(),
    call_index: Type.Integer(),
    user_id: Id,
    roles: Type.Array(Type.String()),
    tool: Type.String(),
    provider: Type.Optional(Type.String()),
    arguments: Type.String({ description: 'as the model sent them (truncated to 4 KiB)' }),
    outcome: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('pending_approval'), Type.Literal('denied')]),
    error_code: Type.Optional(Type.String()),
    result_summary: Type.Optional(Type.String()),
    duration_ms: Type.Number(),
    replayed: Type.Boolean(),
    cached: Type.Boolean(),
    decided_by: Type.Optional(Type.String()),
    adjustments: Type.Optional(Type.Array(ArgumentAdjustment, { description: "the tool's transforms and time normalisation applied to the arguments" })),
    broken_rules: Type.Optional(Type.Array(Type.String(), { description: 'names of the tool rules the arguments broke' })),
  },
  { title: 'ToolAuditRecord', additionalProperties: false },
);
export type ToolAuditRecord = Static<typeof ToolAuditRecord>;
