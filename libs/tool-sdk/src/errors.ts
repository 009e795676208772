import { HermesError } from '@hermes/contracts';

/** Base class of every error the tool SDK throws locally. */
export class ToolSdkError extends HermesError {}

/** A provider cannot start as configured (a bad tool spec, a duplicate name, bad timings): the author's bug. */
export class ToolProviderConfigError extends ToolSdkError {
  constructor(
    readonly provider: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('invalid_tool_provider', `tool provider "${provider}": ${reason}`, options);
  }
}

/**
 * Thrown by a handler to say how its failure should be reported. Any other thrown error becomes a
 * non-retryable `tool_failed` with the error's message; this one lets the handler say the call
 * may be retried (and then its outcome is not remembered, so a retry runs the handler again).
 */
export class ToolFailure extends ToolSdkError {
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;
  constructor(message: string, opts: { retryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super('tool_failed', message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.retryable = opts.retryable ?? false;
    this.details = opts.details;
  }
}
