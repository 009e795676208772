import OpenAI from 'openai';
import { HermesError, wireError, type ErrorCode, type WireError } from '@hermes/contracts';

export type LlmErrorCode = Extract<ErrorCode, 'llm_error' | 'llm_unavailable' | 'llm_rate_limited' | 'llm_timeout' | 'llm_permit_timeout'>;
export interface LlmErrorDetails {
  status?: number;
  model?: string;
  retryAfterMs?: number;
  pool?: string;
}

/** An LLM call failed; `code` and `retryable` say what a caller (or the dispatcher) should do. */
export class LlmError extends HermesError {
  declare readonly code: LlmErrorCode;
  readonly retryable: boolean;
  readonly details: LlmErrorDetails;

  constructor(what: { code: LlmErrorCode; message: string; retryable: boolean; details?: LlmErrorDetails }, options: { cause?: unknown } = {}) {
    super(what.code, what.message, options);
    this.retryable = what.retryable;
    this.details = what.details ?? {};
  }

  toWire(): WireError {
    return wireError(this.code, this.message, { ...this.details }, this.retryable);
  }
}

/** Maps an openai SDK error onto Hermes' codes: 408/409/429/5xx and connection problems are retryable. */
export function toLlmError(err: unknown, model: string): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new LlmError({ code: 'llm_timeout', message: `LLM call to ${model} timed out`, retryable: true, details: { model } }, { cause: err });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new LlmError({ code: 'llm_unavailable', message: `cannot reach the LLM endpoint for ${model}: ${err.message}`, retryable: true, details: { model } }, { cause: err });
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const status = err.status;
    if (status === 429) {
      const retryAfterMs = retryAfterMsFrom(err.headers?.get?.('retry-after'));
      const details = { status, model, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
      return new LlmError({ code: 'llm_rate_limited', message: `LLM provider rate-limited ${model}`, retryable: true, details }, { cause: err });
    }
    if (status === 408) return new LlmError({ code: 'llm_timeout', message: `LLM provider timed out on ${model}`, retryable: true, details: { status, model } }, { cause: err });
    if (status === 409 || status >= 500) {
      return new LlmError({ code: 'llm_unavailable', message: `LLM provider failed (${status}) on ${model}`, retryable: true, details: { status, model } }, { cause: err });
    }
    return new LlmError({ code: 'llm_error', message: `LLM provider rejected the request for ${model} (${status}): ${err.message}`, retryable: false, details: { status, model } }, { cause: err });
  }
  // The SDK reports a call aborted through its signal as APIUserAbortError (no status).
  if (err instanceof OpenAI.APIUserAbortError || (err instanceof Error && err.name === 'AbortError')) {
    return new LlmError({ code: 'llm_timeout', message: `LLM call to ${model} was aborted`, retryable: true, details: { model } }, { cause: err });
  }
  return new LlmError({ code: 'llm_unavailable', message: `LLM call to ${model} failed: ${(err as Error)?.message ?? String(err)}`, retryable: true, details: { model } }, { cause: err });
}

/** Retry-After in ms: delay-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMsFrom(value: string | null | undefined): number | undefined {
  // A missing header must not read as "retry after 0 ms" (Number(null) is 0).
  if (value == null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
