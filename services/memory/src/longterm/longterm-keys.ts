import { sessionKeys } from '../session-keys.js';

/**
 * Redis keys of long-term memory. The memories themselves live in the vector store; Redis holds
 * only bookkeeping: which users have memories (for archival sweeps), when a user was forgotten
 * and which single memories were forgotten (so writes queued before either are dropped), and per session how far extraction has read.
 */
export interface LongTermKeys {
  /** Set of user ids that have (or had) memories. */
  users: string;
  /** Held by the replica running an archival sweep. */
  sweepLock: string;
  forgottenAt(userId: string): string;
  /** Set when one memory is forgotten: a write of that id still queued or redelivered is dropped. */
  forgottenMemory(userId: string, memoryId: string): string;
  /** Messages of the session already read by extraction (a count from the first message). */
  extracted(sessionId: string): string;
  /** Held while an extraction runs for the session, so replicas never judge the same messages twice at once. */
  extracting(sessionId: string): string;
}

export function longTermKeys(keyPrefix: string): LongTermKeys {
  return {
    users: `${keyPrefix}ltm:users`,
    sweepLock: `${keyPrefix}ltm:archive-sweep`,
    forgottenAt: (userId) => `${keyPrefix}ltm:forgotten:${userId}`,
    forgottenMemory: (userId, memoryId) => `${keyPrefix}ltm:forgotten-memory:${userId}:${memoryId}`,
    // Session keys: deleting a session (or forgetting its user) deletes its cursor with it.
    extracted: (sessionId) => sessionKeys(keyPrefix, sessionId).extracted,
    extracting: (sessionId) => sessionKeys(keyPrefix, sessionId).extracting,
  };
}
