import { DEFAULT_TEAM, ownerKey, ownerOf, type Owner, type SessionMessage } from '@hermes/contracts';

/**
 * Where one owner's memory lives. A user id means something only inside its team, so the stores
 * are keyed by owner: the user namespace is the owner key (the bare user id in the default team,
 * what every record written before teams holds; `<team>/<user>` otherwise), and a session id is
 * the owner's own outside the default team (`<team>/<user>/<session>`), so another team naming the
 * same session id reaches another session. Inside the default team sessions keep the one shared
 * namespace they had before teams (see docs/memory.md).
 */
export interface OwnerScope {
  readonly owner: Owner;
  /** The user namespace of the stores (owner check, session index, long-term memories). */
  readonly user: string;
  /** The stores' id of one of the owner's sessions. */
  session(sessionId: string): string;
  /** A session id of the stores as the owner named it. */
  sessionOnWire(stored: string): string;
  /** A stored message as the owner sees it (its own user id and session id). */
  message(m: SessionMessage): SessionMessage;
}

export function scopeOf(req: { readonly team?: string | undefined; readonly user_id: string }): OwnerScope {
  const owner = ownerOf(req);
  const user = ownerKey(owner);
  const prefix = owner.team === DEFAULT_TEAM ? '' : `${user}/`;
  const sessionOnWire = (stored: string) => (prefix && stored.startsWith(prefix) ? stored.slice(prefix.length) : stored);
  return {
    owner,
    user,
    session: (sessionId) => `${prefix}${sessionId}`,
    sessionOnWire,
    message: (m) => ({ ...m, user_id: owner.user_id, session_id: sessionOnWire(m.session_id) }),
  };
}
