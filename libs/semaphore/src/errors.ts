import { HermesError } from '@hermes/contracts';

/** Base class of the semaphore's local errors. */
export class SemaphoreError extends HermesError {}

/** The wait for a permit took longer than the caller allowed. Retryable: the pool is busy, not broken. */
export class PermitTimeoutError extends SemaphoreError {
  readonly retryable = true;
  constructor(
    readonly pool: string,
    readonly timeoutMs: number,
  ) {
    super('permit_timeout', `no permit from pool "${pool}" within ${timeoutMs} ms`);
  }
}

/** The caller abandoned the wait (its task was cancelled, or it is shutting down). */
export class PermitAbortedError extends SemaphoreError {
  constructor(
    readonly pool: string,
    options?: { cause?: unknown },
  ) {
    super('permit_aborted', `wait for a permit from pool "${pool}" was abandoned`, options);
  }
}
