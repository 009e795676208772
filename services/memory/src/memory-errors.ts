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

/** Another holder has the session's lock: retryable once it is released or its lease lapses. */
export class SessionBusyError extends MemoryError {
  readonly sessionId: string;
  constructor(opts: { sessionId: string }) {
    super('session_busy', `session ${opts.sessionId} is locked by another holder`);
    this.sessionId = opts.sessionId;
  }
}

/** The token no longer holds the session's lock (its lease lapsed, or it never did): not retryable. */
export class SessionLockLostError extends MemoryError {
  readonly sessionId: string;
  constructor(opts: { sessionId: string }) {
    super('session_lock_lost', `this token does not hold the lock of session ${opts.sessionId} (lease lapsed?)`);
    this.sessionId = opts.sessionId;
  }
}

/** The task's working memory belongs to another user: the caller's fault, never retryable. */
export class WorkingMemoryForbiddenError extends MemoryError {
  readonly taskId: string;
  constructor(opts: { taskId: string }) {
    super('forbidden', `the working memory of task ${opts.taskId} belongs to another user`);
    this.taskId = opts.taskId;
  }
}

/** No such message in the session: the caller's fault. */
export class MessageNotFoundError extends MemoryError {
  constructor(opts: { sessionId: string; messageId: string }) {
    super('not_found', `no message ${opts.messageId} in session ${opts.sessionId}`);
  }
}
