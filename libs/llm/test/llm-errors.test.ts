import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { LlmError, toLlmError } from '@hermes/llm';

/** An SDK rate-limit error as the openai client builds it from a 429 response. */
function rateLimited(headers: Record<string, string>): InstanceType<typeof OpenAI.RateLimitError> {
  return new OpenAI.RateLimitError(429, { message: 'slow down' }, 'slow down', new Headers(headers));
}

describe('toLlmError', () => {
  it('a 429 without Retry-After carries no retryAfterMs', () => {
    const err = toLlmError(rateLimited({}), 'm');

    expect(err.code).toBe('llm_rate_limited');
    expect(err.details).toEqual({ status: 429, model: 'm' });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();

    expect(toLlmError(rateLimited({ 'retry-after': '3' }), 'm').details.retryAfterMs).toBe(3_000);
    expect(toLlmError(rateLimited({ 'retry-after': '0.5' }), 'm').details.retryAfterMs).toBe(500);
    const fromDate = toLlmError(rateLimited({ 'retry-after': inTenSeconds }), 'm').details.retryAfterMs;
    expect(fromDate).toBeGreaterThan(8_000);
    expect(fromDate).toBeLessThanOrEqual(10_000);
    expect(toLlmError(rateLimited({ 'retry-after': 'soon' }), 'm').details).not.toHaveProperty('retryAfterMs');
  });

  it('keeps the SDK error as the cause and passes an LlmError through unchanged', () => {
    const sdkError = new OpenAI.InternalServerError(500, undefined, 'boom', new Headers());
    const mapped = toLlmError(sdkError, 'm');

    expect(mapped).toBeInstanceOf(LlmError);
    expect(mapped.cause).toBe(sdkError);
    expect(toLlmError(mapped, 'other')).toBe(mapped);
  });

  it('anything else is llm_unavailable and retryable', () => {
    const err = toLlmError(new TypeError('fetch failed'), 'm');

    expect(err).toMatchObject({ code: 'llm_unavailable', retryable: true, details: { model: 'm' } });
    expect(err.message).toContain('fetch failed');
  });
});
