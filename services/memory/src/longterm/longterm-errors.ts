import { inSpan } from '@hermes/telemetry';
import { MemoryError } from '../memory-errors.js';
import { VectorStoreUnavailableError } from './vector-store-errors.js';

/**
 * The vector store or the embedder failed (down, unreachable, timed out): the system's fault and
 * retryable. Requests answer `unavailable`; queued writes are retried with back-off.
 */
export class LongTermStoreUnavailableError extends MemoryError {
  readonly operation: string;
  constructor(opts: { operation: string }, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('longterm_store_unavailable', `long-term memory store failed during ${opts.operation}${reason}`, options);
    this.operation = opts.operation;
  }
}

/** No such memory for this user (another user's memory id is indistinguishable from a missing one). */
export class MemoryNotFoundError extends MemoryError {
  readonly memoryId: string;
  constructor(opts: { memoryId: string; status?: string }) {
    super('not_found', `no ${opts.status ? `${opts.status} ` : ''}memory ${opts.memoryId} for this user`);
    this.memoryId = opts.memoryId;
  }
}

/**
 * Runs a vector-store or embedder call in a span of its own (`memory.<operation>`, so a trace
 * shows where a recall or an extraction spent its time), turning any failure into a
 * LongTermStoreUnavailableError.
 */
export function storeCall<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  return inSpan(`memory.${operation}`, { attributes: { 'hermes.memory.operation': operation } }, async () => {
    try {
      return await fn();
    } catch (err) {
      // Other typed errors (a dimension mismatch, a missing memory) are not outages: they stay as they are.
      if (err instanceof MemoryError && !(err instanceof VectorStoreUnavailableError)) throw err;
      throw new LongTermStoreUnavailableError({ operation }, { cause: err });
    }
  });
}
