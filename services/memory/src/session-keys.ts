/** Redis keys of one session. A hash tag ({session}) keeps them in one Cluster slot, as the Lua scripts require. */
export interface SessionKeys {
  owner: string;
  messages: string;
  /** Total tokens ever appended (stored counts), to tell cheaply how much is not yet summarised. */
  tokens: string;
  summary: string;
  pins: string;
  lock: string;
  /** Per-token lease expiries (ms) of the lock's holders: several when a group shares the lock. */
  lockHolds: string;
  /** Held while a summary job runs for the session, so replicas do not summarise it twice at once. */
  summarizing: string;
  /** How many of the session's messages long-term extraction has read (its cursor). */
  extracted: string;
  /** Held while an extraction job runs for the session (one replica at a time). */
  extracting: string;
}

export function sessionKeys(keyPrefix: string, sessionId: string): SessionKeys {
  const base = `${keyPrefix}session:{${sessionId}}`;
  return {
    owner: `${base}:owner`,
    messages: `${base}:messages`,
    tokens: `${base}:tokens`,
    summary: `${base}:summary`,
    pins: `${base}:pins`,
    lock: `${base}:lock`,
    lockHolds: `${base}:lock:holds`,
    summarizing: `${base}:summarizing`,
    extracted: `${base}:extracted`,
    extracting: `${base}:extracting`,
  };
}

/**
 * Lua prelude shared by scripts that act on a session: KEYS[1] is the owner key, ARGV[1] the user.
 * A session nobody owns yet is claimed for the user; another user's session makes the script
 * return -1 before it touches anything.
 */
export const CLAIM_OR_REFUSE = `
local owner = redis.call('GET', KEYS[1])
if owner == false then
  redis.call('SET', KEYS[1], ARGV[1])
elseif owner ~= ARGV[1] then
  return -1
end
`;
