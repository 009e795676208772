import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.js';
import { Team } from '../owner.js';

/** Take the session's lock (one agent loop per session). A held lock answers `session_busy`. */
export const SessionLockRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    session_id: Id,
    lease_ms: Type.Optional(
      Type.Integer({ minimum: 1000, maximum: 600_000, description: 'the lock lapses unless renewed within this (default MEMORY_LOCK_LEASE_MS)' }),
    ),
    wait_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 60_000,
        description: 'wait up to this long for a busy lock before session_busy (0: fail at once); waiters are not served in order',
      }),
    ),
    holder: Type.Optional(Type.String({ maxLength: 200, description: 'who holds it (e.g. a job id), for logs' })),
    group: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9][A-Za-z0-9_:@-]{0,127}$',
        description:
          'holders naming the same group share the lock (e.g. the parallel subtasks of one task): each gets its own token and lease, and the lock is free once every one released or lapsed; another group (or none) gets session_busy',
      }),
    ),
  },
  { title: 'SessionLockRequest', additionalProperties: false },
);
export type SessionLockRequest = Static<typeof SessionLockRequest>;

export const SessionLockReply = Type.Object(
  {
    token: Type.String({ description: 'proves ownership: renew and release need it' }),
    lease_ms: Type.Integer({ minimum: 1 }),
  },
  { title: 'SessionLockReply', additionalProperties: false },
);
export type SessionLockReply = Static<typeof SessionLockReply>;

/** Extend the lease of a held lock; `session_lock_lost` when the lease already lapsed or another holder has it. */
export const SessionRenewRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    session_id: Id,
    token: Type.String({ minLength: 1 }),
    lease_ms: Type.Optional(Type.Integer({ minimum: 1000, maximum: 600_000 })),
  },
  { title: 'SessionRenewRequest', additionalProperties: false },
);
export type SessionRenewRequest = Static<typeof SessionRenewRequest>;

export const SessionUnlockRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), session_id: Id, token: Type.String({ minLength: 1 }) },
  { title: 'SessionUnlockRequest', additionalProperties: false },
);
export type SessionUnlockRequest = Static<typeof SessionUnlockRequest>;

export const SessionUnlockReply = Type.Object(
  { released: Type.Boolean({ description: 'false: the token did not hold the lock (lapsed, or never did); nothing changed' }) },
  { title: 'SessionUnlockReply', additionalProperties: false },
);
export type SessionUnlockReply = Static<typeof SessionUnlockReply>;
