import type { Redis } from 'ioredis';
import type { SessionListReply, SessionSummaryRow } from '@hermes/contracts';
import { SessionBusyError, SessionForbiddenError, SessionStoreUnavailableError } from './memory-errors.js';
import { forgetSession, userSessionIndexKeys } from './session-index.js';
import { sessionKeys } from './session-keys.js';

const DEFAULT_PAGE = 50;
// How long an index entry may wait for the first write it announced (see noteSession).
const IN_FLIGHT_GRACE_MS = 60_000;

// KEYS: owner, lock, summarizing, messages, then every key of the session. ARGV: user.
// -2 no such session, -1 another user's, -3 busy, else the number of messages deleted.
// A session is not deleted under a running loop or summary job: either would write it back
// (re-claiming it) a moment later.
const DELETE_SCRIPT = `
local owner = redis.call('GET', KEYS[1])
if owner == false then return -2 end
if owner ~= ARGV[1] then return -1 end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return -3 end
local count = redis.call('LLEN', KEYS[4])
redis.call('DEL', unpack(KEYS))
return count`;

/** A user's sessions as a whole: list them, delete one with everything stored for it. */
export class SessionDirectory {
  constructor(private readonly o: { redis: Redis; keyPrefix: string }) {}

  /** The user's sessions, most recently written first, `limit` from offset `cursor`. */
  async list(userId: string, opts: { limit?: number; cursor?: string } = {}): Promise<SessionListReply> {
    const limit = opts.limit ?? DEFAULT_PAGE;
    const offset = opts.cursor === undefined ? 0 : Number(opts.cursor);
    const index = userSessionIndexKeys(this.o.keyPrefix, userId);
    const page = await this.call('list', () => this.o.redis.zrevrange(index.updated, offset, offset + limit - 1, 'WITHSCORES'));
    const ids: { id: string; updated: number }[] = [];
    for (let i = 0; i < page.length; i += 2) ids.push({ id: page[i]!, updated: Number(page[i + 1]) });
    const rows = await Promise.all(ids.map(({ id, updated }) => this.row(userId, id, updated)));
    return {
      sessions: rows.filter((r): r is SessionSummaryRow => r !== undefined),
      next_cursor: ids.length < limit ? null : String(offset + limit),
    };
  }

  /** Deletes the session and every key it has; false when there was no such session. */
  async delete(userId: string, sessionId: string): Promise<{ deleted: boolean; messages: number }> {
    const k = sessionKeys(this.o.keyPrefix, sessionId);
    // Every key sessionKeys names goes, so a key added to a session later is deleted with it too.
    const all = [k.owner, k.lock, k.summarizing, k.messages, ...Object.values(k).filter((key) => ![k.owner, k.lock, k.summarizing, k.messages].includes(key))];
    const result = Number(await this.call('delete', () => this.o.redis.eval(DELETE_SCRIPT, all.length, ...all, userId)));
    if (result === -1) throw new SessionForbiddenError({ sessionId });
    if (result === -3) throw new SessionBusyError({ sessionId });
    await this.call('delete', () => forgetSession(this.o.redis, this.o.keyPrefix, userId, sessionId));
    return result === -2 ? { deleted: false, messages: 0 } : { deleted: true, messages: result };
  }

  private async row(userId: string, sessionId: string, updated: number): Promise<SessionSummaryRow | undefined> {
    const k = sessionKeys(this.o.keyPrefix, sessionId);
    const index = userSessionIndexKeys(this.o.keyPrefix, userId);
    const replies = await this.call('list', () =>
      this.o.redis.multi().get(k.owner).llen(k.messages).get(k.tokens).hlen(k.pins).exists(k.lock).zscore(index.created, sessionId).exec(),
    );
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw new SessionStoreUnavailableError({ operation: 'list' }, { cause: failed });
    const [owner, count, tokens, pins, locked, created] = (replies ?? []).map(([, value]) => value);
    if (owner !== userId) {
      // Indexed before a write that was refused (another user's session), never happened, or the
      // session was deleted: it leaves the index. An unowned entry this young may be a first write
      // still in flight, so it stays (unlisted) for now.
      if (owner !== null || Date.now() - updated > IN_FLIGHT_GRACE_MS) {
        await this.call('list', () => forgetSession(this.o.redis, this.o.keyPrefix, userId, sessionId));
      }
      return undefined;
    }
    return {
      session_id: sessionId,
      message_count: Number(count),
      tokens: Number(tokens ?? 0),
      created_at: new Date(Number(created ?? updated)).toISOString(),
      updated_at: new Date(updated).toISOString(),
      pinned: Number(pins),
      locked: Number(locked) === 1,
    };
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation }, { cause: err });
    }
  }
}
