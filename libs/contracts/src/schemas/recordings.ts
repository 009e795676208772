import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TokenUsage } from './common.js';
import { Team } from '../owner.js';
import { ToolCallReply } from './tool-calls.js';

/**
 * Where a task's model answers come from instead of its pool: a recorded task (each request is
 * matched by subtask, step and request hash; a differing one is a divergence) or a script of
 * turns stored on the bus (the offline eval model). `tools: 'recorded'` answers tool calls from
 * the recording too; `'live'` runs them through the toolbus.
 */
export const ReplaySource = Type.Object(
  {
    source_task: Id,
    mode: Type.Union([Type.Literal('recording'), Type.Literal('script')], { default: 'recording' }),
    tools: Type.Union([Type.Literal('recorded'), Type.Literal('live')], { default: 'recorded' }),
  },
  { title: 'ReplaySource', additionalProperties: false },
);
export type ReplaySource = Static<typeof ReplaySource>;

/** One tool call of a model answer, as recorded (arguments verbatim, malformed JSON included). */
export const RecordedToolCallRequest = Type.Object(
  { id: Type.String(), name: Type.String(), arguments: Type.String() },
  { title: 'RecordedToolCallRequest', additionalProperties: false },
);

/** Fields every recording entry carries: which task, job and step it belongs to. */
const entryBase = {
  task_id: Id,
  subtask_id: Id,
  job_id: Id,
  user_id: Id,
  team: Type.Optional(Team),
  step: Type.Integer({ minimum: 1 }),
  at: Timestamp,
  trace_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$', description: "the task's trace, to find its spans" })),
};

/** One LLM exchange: what was asked (messages, tools offered, role) and everything the model answered. */
export const RecordedLlmExchange = Type.Object(
  {
    kind: Type.Literal('llm'),
    ...entryBase,
    request_hash: Type.String({ description: 'sha256 of the canonical JSON of { messages, tools }: what replay matches a request by' }),
    request: Type.Object(
      {
        model_role: Type.String(),
        messages: Type.Array(Type.Unknown()),
        tools: Type.Optional(Type.Array(Type.Unknown())),
      },
      { additionalProperties: false },
    ),
    response: Type.Object(
      {
        content: Type.Union([Type.String(), Type.Null()]),
        tool_calls: Type.Array(RecordedToolCallRequest),
        model: Type.String(),
        finish_reason: Type.Optional(Type.String()),
        usage: TokenUsage,
      },
      { additionalProperties: false },
    ),
    latency_ms: Type.Number({ minimum: 0 }),
  },
  { title: 'RecordedLlmExchange', additionalProperties: false },
);
export type RecordedLlmExchange = Static<typeof RecordedLlmExchange>;

/** One tool call and the toolbus's reply. */
export const RecordedToolExchange = Type.Object(
  {
    kind: Type.Literal('tool'),
    ...entryBase,
    call_index: Type.Integer({ minimum: 0 }),
    tool: Type.String(),
    arguments: Type.String(),
    reply: ToolCallReply,
    latency_ms: Type.Number({ minimum: 0 }),
    replayed_from: Type.Optional(Type.Literal('recording', { description: 'answered from the source recording, not run' })),
  },
  { title: 'RecordedToolExchange', additionalProperties: false },
);
export type RecordedToolExchange = Static<typeof RecordedToolExchange>;

/** Where a replay left its recording: the first request (or tool call) that did not match. */
export const RecordedDivergence = Type.Object(
  {
    kind: Type.Literal('divergence'),
    ...entryBase,
    source_task: Id,
    reason: Type.Union([Type.Literal('request_differs'), Type.Literal('step_missing'), Type.Literal('tool_call_differs')]),
    call_index: Type.Optional(Type.Integer({ minimum: 0 })),
    expected_hash: Type.Optional(Type.String()),
    actual_hash: Type.Optional(Type.String()),
    diff: Type.String({ description: 'readable line diff of the recorded and the new request messages (or tool call)' }),
  },
  { title: 'RecordedDivergence', additionalProperties: false },
);
export type RecordedDivergence = Static<typeof RecordedDivergence>;

/** When a scripted turn applies, read from the request (the last tool message, the whole conversation). */
export const ScriptCondition = Type.Object(
  {
    last_tool_ok: Type.Optional(Type.Boolean()),
    last_tool_error: Type.Optional(Type.String({ description: "the last tool message's error code" })),
    last_tool_contains: Type.Optional(Type.String()),
    messages_contain: Type.Optional(Type.String({ description: 'some message of the request contains this text' })),
  },
  { title: 'ScriptCondition', additionalProperties: false },
);
export type ScriptCondition = Static<typeof ScriptCondition>;

/** One answer of a scripted model: text, or tool calls (arguments an object, or a string sent verbatim). */
export const ScriptAnswer = Type.Object(
  {
    when: Type.Optional(ScriptCondition),
    content: Type.Optional(Type.String()),
    tool_calls: Type.Optional(
      Type.Array(
        Type.Object(
          { name: Type.String({ minLength: 1 }), arguments: Type.Unknown({ description: 'an object, or a string sent verbatim (malformed JSON included)' }) },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { title: 'ScriptAnswer', additionalProperties: false },
);
export type ScriptAnswer = Static<typeof ScriptAnswer>;

/** A step of a script: the first answer whose `when` holds (one without `when` always does). */
export const ScriptTurn = Type.Array(ScriptAnswer, { minItems: 1, title: 'ScriptTurn' });
export type ScriptTurn = Static<typeof ScriptTurn>;

/** A scripted model stored on the bus for a task to answer from (mode 'script'): turn n answers step n. */
export const RecordedScript = Type.Object(
  {
    kind: Type.Literal('script'),
    task_id: Id,
    user_id: Id,
    team: Type.Optional(Team),
    at: Timestamp,
    turns: Type.Array(ScriptTurn, { minItems: 1 }),
  },
  { title: 'RecordedScript', additionalProperties: false },
);
export type RecordedScript = Static<typeof RecordedScript>;

/** One message of a task's recording (stream HERMES_RECORDINGS, subject per owner and task). */
export const RecordingEntry = Type.Union([RecordedLlmExchange, RecordedToolExchange, RecordedDivergence, RecordedScript], { title: 'RecordingEntry' });
export type RecordingEntry = Static<typeof RecordingEntry>;
