import OpenAI from 'openai';
import { HermesError, wireError, type ErrorCode, type WireError } from '@hermes/contracts';

export type LlmErrorCode = Extract<ErrorCode, 'llm_error' | 'llm_unavailable' | 'llm_rate_limited' | 'llm_timeout' | 'llm_permit_timeout' | 'context_too_long'>;

/** What an LlmError says beyond its code; the context figures only when the provider named them. */
export interface LlmErrorDetails {
  status?: number;
  model?: string;
  retryAfterMs?: number;
  pool?: string;
  context_tokens?: number;
  prompt_tokens?: number;
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
    return new LlmError(
      { code: 'llm_unavailable', message: `cannot reach the LLM endpoint for ${model}: ${err.message}`, retryable: true, details: { model } },
      { cause: err },
    );
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const status = err.status;
    const said = redactSecrets(err.message);
    const retryAfterMs = retryAfterMsOf(err.headers);
    const wait = retryAfterMs !== undefined ? { retryAfterMs } : {};
    if (status === 429)
      return new LlmError(
        { code: 'llm_rate_limited', message: `LLM provider rate-limited ${model}`, retryable: true, details: { status, model, ...wait } },
        { cause: err },
      );
    // Before 5xx: llama.cpp has answered an over-long prompt with 500 "Context size has been exceeded".
    if (isContextTooLong(err)) {
      const message = `the prompt does not fit into ${model}'s context window (${status}): ${said}`;
      return new LlmError({ code: 'context_too_long', message, retryable: false, details: { status, model, ...contextFigures(err) } }, { cause: err });
    }
    if (status === 408)
      return new LlmError(
        { code: 'llm_timeout', message: `LLM provider timed out on ${model}`, retryable: true, details: { status, model, ...wait } },
        { cause: err },
      );
    if (status === 409 || status >= 500) {
      return new LlmError(
        { code: 'llm_unavailable', message: `LLM provider failed (${status}) on ${model}: ${said}`, retryable: true, details: { status, model, ...wait } },
        { cause: err },
      );
    }
    return new LlmError(
      { code: 'llm_error', message: `LLM provider rejected the request for ${model} (${status}): ${said}`, retryable: false, details: { status, model } },
      { cause: err },
    );
  }
  // The SDK reports a call aborted through its signal as APIUserAbortError (no status).
  if (err instanceof OpenAI.APIUserAbortError || (err instanceof Error && err.name === 'AbortError')) {
    return new LlmError({ code: 'llm_timeout', message: `LLM call to ${model} was aborted`, retryable: true, details: { model } }, { cause: err });
  }
  return new LlmError(
    { code: 'llm_unavailable', message: `LLM call to ${model} failed: ${(err as Error)?.message ?? String(err)}`, retryable: true, details: { model } },
    { cause: err },
  );
}

/** The provider's wait: `retry-after-ms` (OpenAI, Azure: finer) first, else `Retry-After`. */
function retryAfterMsOf(headers: Headers | undefined): number | undefined {
  const ms = headers?.get?.('retry-after-ms');
  if (ms != null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  return retryAfterMsFrom(headers?.get?.('retry-after'));
}

// How each server words it: OpenAI/vLLM "maximum context length is N tokens", llama.cpp "exceeds the
// available context size", LM Studio "when context the overflows", Anthropic-style proxies "prompt is too long".
const CONTEXT_WORDING =
  /maximum context length|exceeds the available context|context size has been exceeded|context the overflows|context length exceeded|prompt is too long|too many tokens in the prompt/i;

function isContextTooLong(err: InstanceType<typeof OpenAI.APIError>): boolean {
  return err.code === 'context_length_exceeded' || err.type === 'exceed_context_size_error' || CONTEXT_WORDING.test(err.message);
}

/** The window and the prompt size when the provider said them (llama.cpp's fields, else OpenAI/vLLM's wording). */
function contextFigures(err: InstanceType<typeof OpenAI.APIError>): Pick<LlmErrorDetails, 'context_tokens' | 'prompt_tokens'> {
  const body = (err.error ?? {}) as Record<string, unknown>;
  const context = typeof body.n_ctx === 'number' ? body.n_ctx : Number(/maximum context length is (\d+)/i.exec(err.message)?.[1] ?? NaN);
  const prompt =
    typeof body.n_prompt_tokens === 'number'
      ? body.n_prompt_tokens
      : Number(/(?:resulted in|requested|has) (\d+)(?: input)? tokens/i.exec(err.message)?.[1] ?? NaN);
  return { ...(Number.isFinite(context) ? { context_tokens: context } : {}), ...(Number.isFinite(prompt) ? { prompt_tokens: prompt } : {}) };
}

// Providers echo request fragments in errors; a key or bearer token must not travel on into events and logs.
const SECRETS = /\b(sk-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,}|(api[_-]?key|token|secret)["']?\s*[:=]\s*["']?[^\s"',}]{6,})/gi;

/** The provider's message with anything that looks like a credential replaced. */
export function redactSecrets(message: string): string {
  return message.replace(SECRETS, '[redacted]');
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
