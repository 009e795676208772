import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { SessionBusyError, SessionForbiddenError, SessionLockLostError, SessionStoreUnavailableError } from './memory-errors.js';
import { CLAIM_OR_REFUSE, sessionKeys } from './session-keys.js';

// KEYS: owner, lock. ARGV: user, token, lease ms. -1 another user's session, 0 busy, 1 taken.
const LOCK_SCRIPT = `${CLAIM_OR_REFUSE}
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return 1 end
return 0`;

// Renew and release act only when the lock still holds the caller's token, so a holder whose lease
// lapsed can never extend or delete the lock a newer holder took since. Same KEYS and results.
const RENEW_SCRIPT = `
local owner = redis.call('GET', KEYS[1])
if owner ~= false and owner ~= ARGV[1] then return -1 end
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('PEXPIRE', KEYS[2], ARGV[3]) return 1 end
return 0`;

const RELEASE_SCRIPT = `
local owner = redis.call('GET', KEYS[1])
if owner ~= false and owner ~= ARGV[1] then return -1 end
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) return 1 end
return 0`;

export interface SessionLockOptions {
  redis: Redis;
  keyPrefix: string;
  /** Lease when a request names none. */
  defaultLeaseMs: number;
  /** How often a waiting lock request tries again. */
  retryEveryMs?: number;
}

/**
 * One agent loop per session: a Redis lock with a lease (SET NX PX) that its holder renews. A
 * holder that dies stops renewing and the lock lapses within one lease. Only the random token
 * handed out with the lock can renew or release it.
 */
export class SessionLock {
  constructor(private readonly o: SessionLockOptions) {}

  /** Takes the lock, waiting up to `waitMs` (polling, not in order) before SessionBusyError. */
  async acquire(userId: string, sessionId: string, opts: { leaseMs?: number; waitMs?: number } = {}): Promise<{ token: string; leaseMs: number }> {
    const token = randomBytes(16).toString('hex');
    const leaseMs = opts.leaseMs ?? this.o.defaultLeaseMs;
    const deadline = Date.now() + (opts.waitMs ?? 0);
    for (;;) {
      const taken = await this.run('lock', LOCK_SCRIPT, userId, sessionId, token, leaseMs);
      if (taken === 1) return { token, leaseMs };
      if (Date.now() >= deadline) throw new SessionBusyError({ sessionId });
      await sleep(Math.min(this.o.retryEveryMs ?? 100, Math.max(1, deadline - Date.now())));
    }
  }

  /** Extends the lease; SessionLockLostError when the token no longer holds the lock. */
  async renew(userId: string, sessionId: string, token: string, leaseMs = this.o.defaultLeaseMs): Promise<{ token: string; leaseMs: number }> {
    if ((await this.run('renew', RENEW_SCRIPT, userId, sessionId, token, leaseMs)) !== 1) throw new SessionLockLostError({ sessionId });
    return { token, leaseMs };
  }

  /** Releases the lock if `token` holds it; false (and no change) otherwise. */
  async release(userId: string, sessionId: string, token: string): Promise<boolean> {
    return (await this.run('unlock', RELEASE_SCRIPT, userId, sessionId, token, 0)) === 1;
  }

  private async run(operation: string, script: string, userId: string, sessionId: string, token: string, leaseMs: number): Promise<number> {
    const keys = sessionKeys(this.o.keyPrefix, sessionId);
    let result: unknown;
    try {
      result = await this.o.redis.eval(script, 2, keys.owner, keys.lock, userId, token, leaseMs);
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation }, { cause: err });
    }
    if (result === -1) throw new SessionForbiddenError({ sessionId });
    return Number(result);
  }
}
