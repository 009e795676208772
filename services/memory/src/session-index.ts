import type { Redis } from 'ioredis';

/**
 * Keys of a user's session index: two sorted sets of session ids, scored by the session's first
 * write and by its latest appended message (ms). They carry the user's hash tag, not the
 * session's, so they cannot be written inside the session scripts (one Cluster slot per script).
 */
export function userSessionIndexKeys(keyPrefix: string, userId: string): { created: string; updated: string } {
  const base = `${keyPrefix}user:{${userId}}:sessions`;
  return { created: `${base}:created`, updated: `${base}:updated` };
}

/**
 * Records that `userId` wrote to `sessionId`, before the write itself: if the write then fails or
 * the session turns out to be another user's, the list skips (and drops) the entry, whereas an
 * index written after the write could be lost and hide a session. `touch` moves the session to
 * the top (a message was appended); a pin or a lock only adds it if it is new.
 */
export async function noteSession(redis: Redis, keyPrefix: string, userId: string, sessionId: string, opts: { touch: boolean; at?: number }): Promise<void> {
  const keys = userSessionIndexKeys(keyPrefix, userId);
  // An append passes its messages' time, so a session's created_at is its first message's.
  const now = opts.at ?? Date.now();
  const tx = redis.multi().zadd(keys.created, 'NX', now, sessionId);
  if (opts.touch) tx.zadd(keys.updated, now, sessionId);
  else tx.zadd(keys.updated, 'NX', now, sessionId);
  const replies = await tx.exec();
  const failed = replies?.find(([err]) => err)?.[0];
  if (failed) throw failed;
}

/** Drops a session from the user's index (it was deleted, or is not the user's). */
export async function forgetSession(redis: Redis, keyPrefix: string, userId: string, sessionId: string): Promise<void> {
  const keys = userSessionIndexKeys(keyPrefix, userId);
  await redis.multi().zrem(keys.created, sessionId).zrem(keys.updated, sessionId).exec();
}
