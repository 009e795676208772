import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { Team } from '../owner.js';

export const MessageRole = Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]);

export const ToolCall = Type.Object(
  { tool_call_id: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1 }), arguments: Type.String() },
  { title: 'ToolCall', additionalProperties: false },
);

/** A message to add to a session; the memory service assigns id, time and token count. */
export const NewSessionMessage = Type.Object(
  {
    role: MessageRole,
    content: Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Null()]),
    tool_calls: Type.Optional(Type.Array(ToolCall)),
    tool_call_id: Type.Optional(Type.String({ minLength: 1 })),
  },
  { title: 'NewSessionMessage', additionalProperties: false },
);
export type NewSessionMessage = Static<typeof NewSessionMessage>;

export const SessionMessage = Type.Object(
  {
    message_id: Type.String(),
    session_id: Id,
    user_id: Id,
    role: MessageRole,
    content: Type.Union([Type.String(), Type.Null()]),
    tool_calls: Type.Optional(Type.Array(ToolCall)),
    tool_call_id: Type.Optional(Type.String()),
    created_at: Timestamp,
    tokens: Type.Integer({ minimum: 0 }),
  },
  { title: 'SessionMessage', additionalProperties: false },
);
export type SessionMessage = Static<typeof SessionMessage>;

export const SessionAppendRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), session_id: Id, messages: Type.Array(NewSessionMessage, { minItems: 1, maxItems: 100 }) },
  { title: 'SessionAppendRequest', additionalProperties: false },
);
export type SessionAppendRequest = Static<typeof SessionAppendRequest>;

export const SessionReadRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), session_id: Id, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
  { title: 'SessionReadRequest', additionalProperties: false },
);
export type SessionReadRequest = Static<typeof SessionReadRequest>;

export const SessionMessagesReply = Type.Object({ messages: Type.Array(SessionMessage) }, { title: 'SessionMessagesReply', additionalProperties: false });
export type SessionMessagesReply = Static<typeof SessionMessagesReply>;
