import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { SessionBusyError, SessionForbiddenError, SessionLockLostError, SessionStoreUnavailableError } from './memory-errors.js';
import { CLAIM_OR_REFUSE, sessionKeys } from './session-keys.js';
import { noteSession } from './session-index.js';
import type { ReleaseWaiter, SessionReleaseWatch } from './session-release-watch.js';

// The lock key holds the holder's group (a lone holder is a group of one, named by its token) and
// lapses with the longest lease; the holds hash maps each token to its own lease expiry, so
// holders of one group renew and release independently. Times come from Redis (TIME), so replicas'
// clocks do not matter.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
const EXTEND = `
redis.call('HSET', KEYS[3], ARGV[2], now + tonumber(ARGV[3]))
local ttl = math.max(redis.call('PTTL', KEYS[2]), tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)`;
const OWNER_OR_REFUSE = `
local owner = redis.call('GET', KEYS[1])
if owner ~= false and owner ~= ARGV[1] then return -1 end`;

// KEYS: owner, lock, holds. ARGV: user, token, lease ms, group. -1 another user's session, 0 busy, 1 taken.
const LOCK_SCRIPT = `${CLAIM_OR_REFUSE}
${NOW}
local current = redis.call('GET', KEYS[2])
if current == false then
  redis.call('DEL', KEYS[3])
  redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[3])
elseif current ~= ARGV[4] then
  return 0
end
${EXTEND}
return 1`;

// Renew and release act only while the caller's own hold is alive in the current lock, so a holder
// whose lease lapsed can never extend or delete the lock a newer holder took since. Same KEYS,
// ARGV and results (0: the token does not hold the lock).
const RENEW_SCRIPT = `${OWNER_OR_REFUSE}
${NOW}
local expiry = redis.call('HGET', KEYS[3], ARGV[2])
if redis.call('GET', KEYS[2]) ~= ARGV[4] or expiry == false or tonumber(expiry) <= now then return 0 end
${EXTEND}
return 1`;

// The lock is freed when the last live hold of the group is released (and waiters are told on the
// session's release channel, ARGV[5]); expired holds (holders that died) are dropped on the way.
const RELEASE_SCRIPT = `${OWNER_OR_REFUSE}
${NOW}
local expiry = redis.call('HGET', KEYS[3], ARGV[2])
if redis.call('GET', KEYS[2]) ~= ARGV[4] or expiry == false or tonumber(expiry) <= now then return 0 end
redis.call('HDEL', KEYS[3], ARGV[2])
local holds = redis.call('HGETALL', KEYS[3])
local live = 0
for i = 1, #holds, 2 do
  if tonumber(holds[i + 1]) <= now then redis.call('HDEL', KEYS[3], holds[i]) else live = live + 1 end
end
if live == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
  redis.call('PUBLISH', ARGV[5], '1')
end
return 1`;

// A group's tokens are "<group>/<random>"; '/' cannot occur in a group (an Id), so the group is
// recovered from the token alone and renew/release need nothing else.
const GROUP_SEPARATOR = '/';

export interface SessionLockOptions {
  redis: Redis;
  keyPrefix: string;
  /** Lease when a request names none. */
  defaultLeaseMs: number;
  /** How often a waiting lock request tries again (also when no release wakes it). */
  retryEveryMs?: number;
  /** Wakes waiters as soon as the lock is released; without it they only poll. */
  released?: SessionReleaseWatch;
}

/**
 * One agent loop per session: a Redis lock with a lease that its holder renews. A holder that dies
 * stops renewing and the lock lapses within one lease. Only the random token handed out with the
 * lock can renew or release it. Holders naming the same group (the subtasks of one task) share it.
 */
export class SessionLock {
  constructor(private readonly o: SessionLockOptions) {}

  /**
   * Takes the lock, waiting up to `waitMs` before SessionBusyError: woken by a release, else by
   * polling; not in arrival order.
   */
  async acquire(
    userId: string,
    sessionId: string,
    opts: { leaseMs?: number; waitMs?: number; group?: string } = {},
  ): Promise<{ token: string; leaseMs: number }> {
    const random = randomBytes(16).toString('hex');
    const token = opts.group === undefined ? random : `${opts.group}${GROUP_SEPARATOR}${random}`;
    const leaseMs = opts.leaseMs ?? this.o.defaultLeaseMs;
    const deadline = Date.now() + (opts.waitMs ?? 0);
    await this.call('lock', () => noteSession(this.o.redis, this.o.keyPrefix, userId, sessionId, { touch: false }));
    let waiter: ReleaseWaiter | undefined;
    try {
      for (;;) {
        const taken = await this.run('lock', LOCK_SCRIPT, userId, sessionId, token, leaseMs);
        if (taken === 1) return { token, leaseMs };
        if (Date.now() >= deadline) throw new SessionBusyError({ sessionId });
        if (this.o.released && !waiter) {
          // Listen for the release, then try once more: one that came before we listened is seen by that try.
          waiter = this.o.released.watch(releaseChannel(this.o.keyPrefix, sessionId));
          await waiter.ready;
          continue;
        }
        const pause = Math.min(this.o.retryEveryMs ?? 100, Math.max(1, deadline - Date.now()));
        await (waiter ? waiter.next(pause) : sleep(pause));
      }
    } finally {
      waiter?.close();
    }
  }

  /** Extends the lease; SessionLockLostError when the token no longer holds the lock. */
  async renew(userId: string, sessionId: string, token: string, leaseMs = this.o.defaultLeaseMs): Promise<{ token: string; leaseMs: number }> {
    if ((await this.run('renew', RENEW_SCRIPT, userId, sessionId, token, leaseMs)) !== 1) throw new SessionLockLostError({ sessionId });
    return { token, leaseMs };
  }

  /** Releases the token's hold (the lock, once no other holder of its group is left); false (and no change) if it held nothing. */
  async release(userId: string, sessionId: string, token: string): Promise<boolean> {
    return (await this.run('unlock', RELEASE_SCRIPT, userId, sessionId, token, 0)) === 1;
  }

  private async run(operation: string, script: string, userId: string, sessionId: string, token: string, leaseMs: number): Promise<number> {
    const keys = sessionKeys(this.o.keyPrefix, sessionId);
    const cut = token.lastIndexOf(GROUP_SEPARATOR);
    const group = cut < 0 ? token : token.slice(0, cut);
    const channel = releaseChannel(this.o.keyPrefix, sessionId);
    const result = await this.call(operation, () =>
      this.o.redis.eval(script, 3, keys.owner, keys.lock, keys.lockHolds, userId, token, leaseMs, group, channel),
    );
    if (result === -1) throw new SessionForbiddenError({ sessionId });
    return Number(result);
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation }, { cause: err });
    }
  }
}

/** The Pub/Sub channel a session's lock release is announced on. */
export function releaseChannel(keyPrefix: string, sessionId: string): string {
  return `${sessionKeys(keyPrefix, sessionId).lock}:released`;
}
