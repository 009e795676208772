/** Base class of every error the memory service throws locally. */
export class MemoryError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The session belongs to another user: the caller's fault, never retryable. */
export class SessionForbiddenError extends MemoryError {
  readonly sessionId: string;
  constructor(opts: { sessionId: string }) {
    // The owner is deliberately not named: it would tell one user who another user is.
    super('session_forbidden', `session ${opts.sessionId} belongs to another user`);
    this.sessionId = opts.sessionId;
  }
}

/**
 * Redis failed, could not be reached or did not answer in time: the system's fault, and retryable
 * since nearly every such failure is transient (connection loss, timeout, failover).
 */
export class SessionStoreUnavailableError extends MemoryError {
  readonly operation: string;
  constructor(opts: { operation: string }, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('session_store_unavailable', `session store (Redis) failed during ${opts.operation}${reason}`, options);
    this.operation = opts.operation;
  }
}
