import OpenAI from 'openai';
import { wireError, type ErrorCode, type WireError } from '@hermes/contracts';

/** An LLM call failed; `code` and `retryable` say what a caller (or the dispatcher) should do. */
export class LlmError extends Error {
  constructor(
    readonly code: Extract<ErrorCode, 'llm_error' | 'llm_unavailable' | 'llm_rate_limited' | 'llm_timeout' | 'llm_permit_timeout'>,
    message: string,
    readonly retryable: boolean,
    readonly details: { status?: number; model?: string; retryAfterMs?: number; pool?: string } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }

  toWire(): WireError {
    return wireError(this.code, this.message, { ...this.details }, this.retryable);
  }
}

/** Maps an openai SDK error onto Hermes' codes: 408/409/429/5xx and connection problems are retryable. */
export function toLlmError(err: unknown, model: string): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new LlmError('llm_timeout', `LLM call to ${model} timed out`, true, { model }, { cause: err });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new LlmError('llm_unavailable', `cannot reach the LLM endpoint for ${model}: ${err.message}`, true, { model }, { cause: err });
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const status = err.status;
    if (status === 429) {
      const retryAfterMs = retryAfterMsFrom(err.headers?.get?.('retry-after'));
      return new LlmError('llm_rate_limited', `LLM provider rate-limited ${model}`, true, {
        status,
        model,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      }, { cause: err });
    }
    if (status === 408) return new LlmError('llm_timeout', `LLM provider timed out on ${model}`, true, { status, model }, { cause: err });
    if (status === 409 || status >= 500) {
      return new LlmError('llm_unavailable', `LLM provider failed (${status}) on ${model}`, true, { status, model }, { cause: err });
    }
    return new LlmError('llm_error', `LLM provider rejected the request for ${model} (${status}): ${err.message}`, false, { status, model }, { cause: err });
  }
  // The SDK reports a call aborted through its signal as APIUserAbortError (no status).
  if (err instanceof OpenAI.APIUserAbortError || (err instanceof Error && err.name === 'AbortError')) {
    return new LlmError('llm_timeout', `LLM call to ${model} was aborted`, true, { model }, { cause: err });
  }
  return new LlmError('llm_unavailable', `LLM call to ${model} failed: ${(err as Error)?.message ?? String(err)}`, true, { model }, { cause: err });
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
