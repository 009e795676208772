import { PermitAbortedError, PermitTimeoutError, type DistributedSemaphore } from '@hermes/semaphore';
import { LlmError } from './llm-errors.js';
import type { PermitProvider } from './permits.js';

/** Every LLM call takes a permit from the cluster-wide semaphore on NATS. */
export function semaphorePermits(sem: DistributedSemaphore): PermitProvider {
  return {
    reserve: (pool) => sem.reserve(pool),
    async acquire(req) {
      try {
        return await sem.acquire(req.pool, {
          estimatedTokens: req.estimatedTokens,
          ...(req.priority !== undefined ? { priority: req.priority } : {}),
          ...(req.background ? { background: true } : {}),
          ...(req.signal ? { signal: req.signal } : {}),
          ...(req.timeoutMs !== undefined ? { timeoutMs: req.timeoutMs } : {}),
        });
      } catch (err) {
        if (err instanceof PermitTimeoutError) {
          throw new LlmError({ code: 'llm_permit_timeout', message: err.message, retryable: true, details: { pool: req.pool } }, { cause: err });
        }
        // The caller gave up (as with a call aborted mid-flight): not a provider failure.
        if (err instanceof PermitAbortedError) {
          throw new LlmError(
            { code: 'llm_timeout', message: `wait for a permit from pool "${req.pool}" was aborted`, retryable: true, details: { pool: req.pool } },
            { cause: err },
          );
        }
        throw err;
      }
    },
  };
}
