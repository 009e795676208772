import type { Redis } from 'ioredis';
import { DEFAULT_TEAM, ownerKey, ownerOf, type Owner, type SessionMessage } from '@hermes/contracts';
import { SessionStoreUnavailableError } from './memory-errors.js';
import { sessionKeys } from './session-keys.js';

/**
 * Where one owner's memory lives. A user id means something only inside its team, so the stores
 * are keyed by owner: the user namespace is the owner key (the bare user id in the default team,
 * what every record written before teams holds; `<team>/<user>` otherwise), and a session id is
 * the owner's own (`<user>/<session>` in the default team, `<team>/<user>/<session>` in any other;
 * ids never hold a `/`, so the two never meet): another user, or the same user id in another team,
 * naming the same session id reaches another session, so an id can neither be squatted nor probed.
 * Sessions of the default team written before sessions were the owner's are read through
 * (`SessionNames`).
 */
export interface OwnerScope {
  readonly owner: Owner;
  /** The user namespace of the stores (owner check, session index, long-term memories). */
  readonly user: string;
  /** The stores' id of one of the owner's sessions (a new one; see `SessionNames` for those written before). */
  session(sessionId: string): string;
  /** A session id of the stores as the owner named it. */
  sessionOnWire(stored: string): string;
  /** A stored message as the owner sees it (its own user id and session id). */
  message(m: SessionMessage): SessionMessage;
}

export function scopeOf(req: { readonly team?: string | undefined; readonly user_id: string }): OwnerScope {
  const owner = ownerOf(req);
  const user = ownerKey(owner);
  const prefix = `${user}/`;
  const sessionOnWire = (stored: string) => (stored.startsWith(prefix) ? stored.slice(prefix.length) : stored);
  return {
    owner,
    user,
    session: (sessionId) => `${prefix}${sessionId}`,
    sessionOnWire,
    message: (m) => ({ ...m, user_id: owner.user_id, session_id: sessionOnWire(m.session_id) }),
  };
}

/** A request's owner scope with its session resolved to the stores' id. */
export interface ScopedSession {
  sc: OwnerScope;
  user: string;
  session: string;
}

/**
 * Resolves a session id as an owner names it to the stores' id. Before sessions were the owner's,
 * a default-team session was stored under its bare id, claimed by its first writer; such a session
 * of this very owner is still found there (one owner-key read), so conversations carry on across
 * the upgrade. A bare session of another user is not this owner's: the owner gets their own
 * (`<user>/<session>`), empty until they write it, exactly as for an id nobody used.
 */
export class SessionNames {
  constructor(private readonly o: { redis: Redis; keyPrefix: string }) {}

  async of(req: { readonly team?: string | undefined; readonly user_id: string; readonly session_id: string }): Promise<ScopedSession> {
    const sc = scopeOf(req);
    return { sc, user: sc.user, session: await this.resolve(sc, req.session_id) };
  }

  async resolve(sc: OwnerScope, sessionId: string): Promise<string> {
    if (sc.owner.team !== DEFAULT_TEAM) return sc.session(sessionId);
    let legacyOwner: string | null;
    try {
      legacyOwner = await this.o.redis.get(sessionKeys(this.o.keyPrefix, sessionId).owner);
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation: 'resolve session' }, { cause: err });
    }
    return legacyOwner === sc.user ? sessionId : sc.session(sessionId);
  }
}
