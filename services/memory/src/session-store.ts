import type { Redis } from 'ioredis';
import type { NewSessionMessage, SessionMessage } from '@hermes/contracts';
import { SessionForbiddenError, SessionStoreUnavailableError } from './memory-errors.js';
import { newMessageId } from './message-id.js';
import { estimateTokens } from './token-estimate.js';

const DEFAULT_READ_LIMIT = 50;

// Claiming the session (SET NX) and pushing must happen as one step, or a session could change
// hands between the owner check and the push. MULTI cannot branch on the owner it reads, and
// WATCH is per connection while this client multiplexes concurrent requests over one, so the
// check-and-push runs as a Lua script, which Redis executes atomically.
const APPEND_SCRIPT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 2))
return 1`;

export interface SessionStoreOptions {
  redis: Redis;
  /** Prepended to every key, so several deployments can share one Redis. */
  keyPrefix: string;
}

/**
 * A user's conversation sessions in Redis: one list of JSON messages per session, plus an owner
 * key set by the first append. A session is only ever served to the user who owns it.
 */
export class SessionStore {
  private readonly redis: Redis;
  private readonly keyPrefix: string;

  constructor(opts: SessionStoreOptions) {
    this.redis = opts.redis;
    this.keyPrefix = opts.keyPrefix;
  }

  /** Appends messages (claiming a new session for `userId`) and returns them as stored. */
  async append(userId: string, sessionId: string, messages: readonly NewSessionMessage[]): Promise<SessionMessage[]> {
    if (messages.length === 0) return [];
    const createdAt = new Date().toISOString();
    const stored = messages.map((m): SessionMessage => ({
      message_id: newMessageId(),
      session_id: sessionId,
      user_id: userId,
      role: m.role,
      content: m.content,
      ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}),
      ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
      created_at: createdAt,
      tokens: estimateTokens(m),
    }));
    const keys = this.keysFor(sessionId);
    const appended = await this.call('append', () =>
      this.redis.eval(APPEND_SCRIPT, 2, keys.owner, keys.messages, userId, ...stored.map((m) => JSON.stringify(m))),
    );
    if (appended !== 1) throw new SessionForbiddenError({ sessionId });
    return stored;
  }

  /** The latest `limit` messages of a session, oldest first; [] for a session that does not exist. */
  async read(userId: string, sessionId: string, limit = DEFAULT_READ_LIMIT): Promise<SessionMessage[]> {
    // LRANGE -0 -1 would return the whole list, so a bad limit must not reach Redis.
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    const keys = this.keysFor(sessionId);
    const [owner, items] = await this.call('read', async () => {
      const replies = await this.redis.multi().get(keys.owner).lrange(keys.messages, -limit, -1).exec();
      const [ownerReply, itemsReply] = replies ?? [];
      const failed = ownerReply?.[0] ?? itemsReply?.[0];
      if (failed) throw failed;
      return [ownerReply?.[1] as string | null, (itemsReply?.[1] ?? []) as string[]] as const;
    });
    if (owner === null) return [];
    if (owner !== userId) throw new SessionForbiddenError({ sessionId });
    return items.map((item) => JSON.parse(item) as SessionMessage);
  }

  // A hash tag ({session}) keeps both keys in one Redis Cluster slot, as the script requires.
  private keysFor(sessionId: string): { owner: string; messages: string } {
    const base = `${this.keyPrefix}session:{${sessionId}}`;
    return { owner: `${base}:owner`, messages: `${base}:messages` };
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation }, { cause: err });
    }
  }
}
