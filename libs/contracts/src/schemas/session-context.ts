import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.js';
import { Team } from '../owner.js';
import { MessageRole, NewSessionMessage, SessionMessage, ToolCall } from './memory.js';

/** Ask for the conversation that fits a model's context window (recent turns, summary, pinned facts). */
export const SessionContextRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    session_id: Id,
    model: Type.String({ minLength: 1, description: 'model the context is for; picks the tokenizer (o200k or cl100k family)' }),
    context_limit: Type.Integer({ minimum: 256, description: "the model's context window, in tokens" }),
    reserve_output: Type.Optional(Type.Integer({ minimum: 0, description: 'tokens kept free for the answer (default 0)' })),
    reserve_tools: Type.Optional(Type.Integer({ minimum: 0, description: 'tokens kept free for tool schemas and the system prompt (default 0)' })),
  },
  { title: 'SessionContextRequest', additionalProperties: false },
);
export type SessionContextRequest = Static<typeof SessionContextRequest>;

/** One message of an assembled context: a stored message (maybe truncated) or a synthesised system message. */
export const ContextMessage = Type.Object(
  {
    role: MessageRole,
    content: Type.Union([Type.String(), Type.Null()]),
    tool_calls: Type.Optional(Type.Array(ToolCall)),
    tool_call_id: Type.Optional(Type.String()),
    message_id: Type.Optional(Type.String({ description: 'the stored message; absent on the summary and pinned-facts messages' })),
    kind: Type.Union([Type.Literal('message'), Type.Literal('summary'), Type.Literal('pinned')]),
    tokens: Type.Integer({ minimum: 0, description: 'tokens of this message as sent, for the requested model' }),
    truncated: Type.Optional(Type.Boolean({ description: 'a tool result cut to MEMORY_TOOL_RESULT_MAX_TOKENS; sessionMessage returns it in full' })),
  },
  { title: 'ContextMessage', additionalProperties: false },
);
export type ContextMessage = Static<typeof ContextMessage>;

export const SessionContextReply = Type.Object(
  {
    messages: Type.Array(ContextMessage),
    tokens: Type.Integer({ minimum: 0, description: 'total tokens of messages' }),
    budget: Type.Integer({ description: 'context_limit - reserve_output - reserve_tools' }),
    summary_used: Type.Boolean(),
    truncated_tool_results: Type.Integer({ minimum: 0 }),
    dropped_messages: Type.Integer({ minimum: 0, description: 'unsummarised messages left out for lack of room (a summary job is queued)' }),
  },
  { title: 'SessionContextReply', additionalProperties: false },
);
export type SessionContextReply = Static<typeof SessionContextReply>;

/** Read one stored message in full (e.g. a tool result truncated in context). */
export const SessionMessageRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), session_id: Id, message_id: Type.String({ minLength: 1 }) },
  { title: 'SessionMessageRequest', additionalProperties: false },
);
export type SessionMessageRequest = Static<typeof SessionMessageRequest>;

export const SessionMessageReply = Type.Object({ message: SessionMessage }, { title: 'SessionMessageReply', additionalProperties: false });
export type SessionMessageReply = Static<typeof SessionMessageReply>;

export const PinKind = Type.Union([Type.Literal('fact'), Type.Literal('constraint'), Type.Literal('deadline')]);

/** A fact kept in every context of its session, however old. */
export const PinnedFact = Type.Object(
  {
    pin_id: Type.String(),
    kind: PinKind,
    text: Type.String({ minLength: 1, maxLength: 2000 }),
    source: Type.Union([Type.Literal('user'), Type.Literal('summary')], { description: 'pinned by a caller, or found by the summariser' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'PinnedFact', additionalProperties: false },
);
export type PinnedFact = Static<typeof PinnedFact>;

export const SessionPinRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), session_id: Id, kind: PinKind, text: Type.String({ minLength: 1, maxLength: 2000 }) },
  { title: 'SessionPinRequest', additionalProperties: false },
);
export type SessionPinRequest = Static<typeof SessionPinRequest>;

export const SessionPinReply = Type.Object({ pin: PinnedFact, pins: Type.Array(PinnedFact) }, { title: 'SessionPinReply', additionalProperties: false });
export type SessionPinReply = Static<typeof SessionPinReply>;

/** Force a running-summary update now (`hermes session summarize`). */
export const SessionSummarizeRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    session_id: Id,
    keep_recent: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, description: 'latest messages left out of the summary (default MEMORY_SUMMARY_KEEP_RECENT)' }),
    ),
  },
  { title: 'SessionSummarizeRequest', additionalProperties: false },
);
export type SessionSummarizeRequest = Static<typeof SessionSummarizeRequest>;

export const SessionSummarizeReply = Type.Object(
  {
    summary: Type.Union([Type.String(), Type.Null()]),
    covered_messages: Type.Integer({ minimum: 0, description: 'messages (oldest first) the summary now stands for' }),
    folded_messages: Type.Integer({ minimum: 0, description: 'messages folded in by this run (0: nothing new to summarise)' }),
    pins_added: Type.Integer({ minimum: 0 }),
  },
  { title: 'SessionSummarizeReply', additionalProperties: false },
);
export type SessionSummarizeReply = Static<typeof SessionSummarizeReply>;

/**
 * Fold a running task's conversation into a summary with the session summariser: the runtime asks
 * when the model answered context_too_long, and sends the summary instead of these messages.
 * Nothing is stored.
 */
export const SessionCompactRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    session_id: Id,
    messages: Type.Array(NewSessionMessage, { minItems: 1, maxItems: 10_000, description: 'the conversation to fold, oldest first' }),
  },
  { title: 'SessionCompactRequest', additionalProperties: false },
);
export type SessionCompactRequest = Static<typeof SessionCompactRequest>;

export const SessionCompactReply = Type.Object(
  {
    summary: Type.String({ description: 'the messages, summarised' }),
    pinned: Type.Array(Type.Object({ kind: PinKind, text: Type.String({ minLength: 1, maxLength: 2000 }) }, { additionalProperties: false }), {
      description: 'constraints and deadlines the user stated in them',
    }),
    folded_messages: Type.Integer({ minimum: 0 }),
    input_tokens: Type.Integer({ minimum: 0, description: 'tokens of the folded messages (memory service tokenizer)' }),
    summarizer_calls: Type.Integer({ minimum: 0, description: 'summariser LLM calls it took' }),
  },
  { title: 'SessionCompactReply', additionalProperties: false },
);
export type SessionCompactReply = Static<typeof SessionCompactReply>;
