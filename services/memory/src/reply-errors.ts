import { wireError } from '@hermes/contracts';
import { ReplyError, type Bus } from '@hermes/bus';
import {
  MessageNotFoundError,
  SessionBusyError,
  SessionForbiddenError,
  SessionLockLostError,
  SessionStoreUnavailableError,
  WorkingMemoryForbiddenError,
} from './memory-errors.js';
import { LongTermStoreUnavailableError, MemoryNotFoundError } from './longterm/longterm-errors.js';

/**
 * Local errors become wire errors here and nowhere else; anything unexpected is rethrown so
 * `serve` logs it and answers `internal`.
 */
export function toReplyError(err: unknown, bus: Bus): unknown {
  if (err instanceof SessionForbiddenError) {
    return new ReplyError(wireError('session_forbidden', err.message, { session_id: err.sessionId }));
  }
  if (err instanceof SessionBusyError) return new ReplyError(wireError('session_busy', err.message, { session_id: err.sessionId }));
  if (err instanceof SessionLockLostError) return new ReplyError(wireError('session_lock_lost', err.message, { session_id: err.sessionId }));
  if (err instanceof WorkingMemoryForbiddenError) return new ReplyError(wireError('forbidden', err.message, { task_id: err.taskId }));
  if (err instanceof MessageNotFoundError) return new ReplyError(wireError('not_found', err.message));
  if (err instanceof MemoryNotFoundError) return new ReplyError(wireError('not_found', err.message, { memory_id: err.memoryId }));
  if (err instanceof LongTermStoreUnavailableError) {
    bus.logger.warn({ err: err.message, operation: err.operation }, 'long-term memory store unavailable');
    return new ReplyError(wireError('unavailable', 'the long-term memory store is unavailable; retry later', { operation: err.operation }));
  }
  if (err instanceof SessionStoreUnavailableError) {
    bus.logger.warn({ err: err.message, operation: err.operation }, 'session store unavailable');
    return new ReplyError(wireError('unavailable', 'the session store (Redis) is unavailable; retry later', { operation: err.operation }));
  }
  return err;
}

/** Runs a handler body, turning local errors into wire errors. */
export async function answer<T>(bus: Bus, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw toReplyError(err, bus);
  }
}
