/**
 * Whether GenAI spans may record content: prompts, answers, tool arguments and results. Off unless
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` (the OpenTelemetry name) or
 * `OTEL_GENAI_CAPTURE_CONTENT` is `true`: content may hold personal data.
 */
export function genAiContentCapture(env: NodeJS.ProcessEnv = process.env): boolean {
  const on = (v: string | undefined) => v?.trim().toLowerCase() === 'true';
  return on(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) || on(env.OTEL_GENAI_CAPTURE_CONTENT);
}

/** Longest content attribute value; longer content is cut (span attributes are not a transcript store). */
export const GENAI_CONTENT_MAX_CHARS = 16_384;

/** Serialises content for a span attribute, cut to GENAI_CONTENT_MAX_CHARS. */
export function contentAttribute(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return text.length > GENAI_CONTENT_MAX_CHARS ? `${text.slice(0, GENAI_CONTENT_MAX_CHARS)}…` : text;
}
