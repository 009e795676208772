import { describe, expect, it } from 'vitest';
import { GENAI_CONTENT_MAX_CHARS, contentAttribute, genAiContentCapture } from '@hermes/telemetry';

describe('genAiContentCapture', () => {
  it('is off unless one of the opt-in settings is true', () => {
    expect(genAiContentCapture({})).toBe(false);
    expect(genAiContentCapture({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' })).toBe(false);
    expect(genAiContentCapture({ OTEL_GENAI_CAPTURE_CONTENT: 'yes' })).toBe(false);
    expect(genAiContentCapture({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' })).toBe(true);
    expect(genAiContentCapture({ OTEL_GENAI_CAPTURE_CONTENT: 'TRUE' })).toBe(true);
  });

  it('content attributes are JSON, cut to the maximum length', () => {
    expect(contentAttribute({ a: 1 })).toBe('{"a":1}');
    expect(contentAttribute('plain')).toBe('plain');
    expect(contentAttribute('x'.repeat(GENAI_CONTENT_MAX_CHARS + 10))).toHaveLength(GENAI_CONTENT_MAX_CHARS + 1);
  });
});
