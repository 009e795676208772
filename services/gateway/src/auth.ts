import { createHash, timingSafeEqual } from 'node:crypto';
import { DEFAULT_TEAM } from '@hermes/contracts';
import type { ApiKeyEntry } from './settings.js';

/** Who is calling, as established from their API key. */
export interface Caller {
  readonly user_id: string;
  /** The team of the key: the caller reads and acts only on that team's tasks, sessions and memories. */
  readonly team: string;
  readonly roles: readonly string[];
  /** Admins may act for other users of their team and read every task of it. */
  readonly isAdmin: boolean;
  /**
   * Whose approvals the caller decides: `team` (admin or an approver role) every task's of the
   * team, `own` their own tasks' (no approver roles configured), `none` (approver roles configured,
   * the caller holds none: a requester does not approve their own risky calls).
   */
  readonly approves: 'team' | 'own' | 'none';
}

export type AuthResult = { ok: true; caller: Caller } | { ok: false; reason: 'missing' | 'invalid' };

/** Maps an `Authorization: Bearer <key>` header to the caller it belongs to. */
export type Authenticator = (authorization: string | undefined) => AuthResult;

const digest = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/**
 * Keys are compared as SHA-256 digests with timingSafeEqual, and every configured key is checked
 * even after a match, so response time reveals neither a key's prefix nor its position.
 */
export function createAuthenticator(entries: readonly ApiKeyEntry[], approverRoles: readonly string[] = []): Authenticator {
  const known = entries.map((e) => ({
    digest: digest(e.key),
    caller: {
      user_id: e.user_id,
      team: e.team ?? DEFAULT_TEAM,
      roles: [...e.roles],
      isAdmin: e.roles.includes('admin'),
      approves: approvalScope(e.roles, approverRoles),
    } satisfies Caller,
  }));
  return (authorization) => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!match) return { ok: false, reason: 'missing' };
    const presented = digest(match[1]!);
    let found: Caller | undefined;
    for (const k of known) {
      if (timingSafeEqual(k.digest, presented) && !found) found = k.caller;
    }
    return found ? { ok: true, caller: found } : { ok: false, reason: 'invalid' };
  };
}

function approvalScope(roles: readonly string[], approverRoles: readonly string[]): Caller['approves'] {
  if (roles.includes('admin') || roles.some((r) => approverRoles.includes(r))) return 'team';
  return approverRoles.length ? 'none' : 'own';
}
