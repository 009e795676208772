import type { Redis } from 'ioredis';
import type { NewSessionMessage, SessionMessage } from '@hermes/contracts';
import { SessionForbiddenError, SessionStoreUnavailableError } from './memory-errors.js';
import { newMessageId } from './message-id.js';
import { noteSession } from './session-index.js';
import { sessionKeys, type SessionKeys } from './session-keys.js';
import { countMessage, type EncodingName } from '@hermes/llm';

const DEFAULT_READ_LIMIT = 50;

// Claiming the session (SET NX) and pushing must happen as one step, or a session could change
// hands between the owner check and the push. MULTI cannot branch on the owner it reads, and
// WATCH is per connection while this client multiplexes concurrent requests over one, so the
// check-and-push runs as a Lua script, which Redis executes atomically.
const APPEND_SCRIPT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 3))
redis.call('INCRBY', KEYS[3], ARGV[2])
return 1`;

// How many messages getMessage reads per round trip while looking for an id (newest first).
const SCAN_CHUNK = 200;

export interface SessionStoreOptions {
  redis: Redis;
  /** Prepended to every key, so several deployments can share one Redis. */
  keyPrefix: string;
  /** Encoding of the token count stored with each message (default o200k_base). */
  encoding?: EncodingName;
}

/**
 * A user's conversation sessions in Redis: one list of JSON messages per session, plus an owner
 * key set by the first append. A session is only ever served to the user who owns it.
 */
export class SessionStore {
  private readonly redis: Redis;
  private readonly keyPrefix: string;
  /** Encoding of the stored token counts; a context for another model family recounts. */
  readonly encoding: EncodingName;

  constructor(opts: SessionStoreOptions) {
    this.redis = opts.redis;
    this.keyPrefix = opts.keyPrefix;
    this.encoding = opts.encoding ?? 'o200k_base';
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
      tokens: countMessage(m, this.encoding),
    }));
    const keys = this.keysFor(sessionId);
    const total = stored.reduce((sum, m) => sum + m.tokens, 0);
    const appended = await this.call('append', async () => {
      await noteSession(this.redis, this.keyPrefix, userId, sessionId, { touch: true, at: Date.parse(createdAt) });
      return this.redis.eval(APPEND_SCRIPT, 3, keys.owner, keys.messages, keys.tokens, userId, total, ...stored.map((m) => JSON.stringify(m)));
    });
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

  /**
   * Messages from index `start` (0 is the first ever appended) to the end, oldest first; [] for a
   * session that does not exist.
   */
  async readFrom(userId: string, sessionId: string, start: number): Promise<SessionMessage[]> {
    const keys = this.keysFor(sessionId);
    const [owner, items] = await this.call('read', async () => {
      const replies = await this.redis.multi().get(keys.owner).lrange(keys.messages, start, -1).exec();
      const [ownerReply, itemsReply] = replies ?? [];
      const failed = ownerReply?.[0] ?? itemsReply?.[0];
      if (failed) throw failed;
      return [ownerReply?.[1] as string | null, (itemsReply?.[1] ?? []) as string[]] as const;
    });
    if (owner === null) return [];
    if (owner !== userId) throw new SessionForbiddenError({ sessionId });
    return items.map((item) => JSON.parse(item) as SessionMessage);
  }

  /** Refuses another user's session; false when the session does not exist (yet). */
  async checkOwner(userId: string, sessionId: string): Promise<boolean> {
    const owner = await this.call('read', () => this.redis.get(this.keysFor(sessionId).owner));
    if (owner === null) return false;
    if (owner !== userId) throw new SessionForbiddenError({ sessionId });
    return true;
  }

  /** One message by id, searched newest first (ids are not indexed: a truncated tool result is usually recent). */
  async getMessage(userId: string, sessionId: string, messageId: string): Promise<SessionMessage | undefined> {
    if (!(await this.checkOwner(userId, sessionId))) return undefined;
    const key = this.keysFor(sessionId).messages;
    for (let end = -1; ; end -= SCAN_CHUNK) {
      const items = await this.call('read', () => this.redis.lrange(key, end - SCAN_CHUNK + 1, end));
      for (const item of items) {
        const message = JSON.parse(item) as SessionMessage;
        if (message.message_id === messageId) return message;
      }
      if (items.length < SCAN_CHUNK) return undefined;
    }
  }

  /** Total stored tokens ever appended to a session (0 when it does not exist). */
  async totalTokens(sessionId: string): Promise<number> {
    return Number((await this.call('read', () => this.redis.get(this.keysFor(sessionId).tokens))) ?? 0);
  }

  keysFor(sessionId: string): SessionKeys {
    return sessionKeys(this.keyPrefix, sessionId);
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation }, { cause: err });
    }
  }
}
