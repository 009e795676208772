import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { Team } from '../owner.js';

/** List one user's sessions, most recently written first. */
export const SessionListRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'sessions per page (default 50)' })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'next_cursor of the previous page' })),
  },
  { title: 'SessionListRequest', additionalProperties: false },
);
export type SessionListRequest = Static<typeof SessionListRequest>;

/**
 * What a session list shows of one session; its messages are read with sessionRead. `created_at`
 * is its first write (a message, a pin or its lock), `updated_at` the latest message appended.
 */
export const SessionSummaryRow = Type.Object(
  {
    session_id: Id,
    message_count: Type.Integer({ minimum: 0 }),
    tokens: Type.Integer({ minimum: 0, description: 'stored tokens of every message ever appended' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    pinned: Type.Integer({ minimum: 0, description: 'pinned facts' }),
    locked: Type.Boolean({ description: 'an agent loop holds the session now' }),
  },
  { title: 'SessionSummaryRow', additionalProperties: false },
);
export type SessionSummaryRow = Static<typeof SessionSummaryRow>;

export const SessionListReply = Type.Object(
  {
    sessions: Type.Array(SessionSummaryRow),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next page; null on the last' }),
  },
  { title: 'SessionListReply', additionalProperties: false },
);
export type SessionListReply = Static<typeof SessionListReply>;

/**
 * Delete one session of a user: messages (tool results in full included), summary, pins and its
 * lock. Another user's session answers session_forbidden; a session an agent loop holds answers
 * session_busy (deleting under a running loop would let it write the session back).
 */
export const SessionDeleteRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), session_id: Id },
  { title: 'SessionDeleteRequest', additionalProperties: false },
);
export type SessionDeleteRequest = Static<typeof SessionDeleteRequest>;

export const SessionDeleteReply = Type.Object(
  {
    deleted: Type.Boolean({ description: 'false: there was no such session' }),
    messages: Type.Integer({ minimum: 0, description: 'messages removed' }),
  },
  { title: 'SessionDeleteReply', additionalProperties: false },
);
export type SessionDeleteReply = Static<typeof SessionDeleteReply>;
