import { SpanStatusCode, context, type Context, type Span, type SpanOptions } from '@opentelemetry/api';
import { hermesTracer } from './tracing.js';

/**
 * Runs `fn` inside a new active span (child of `parent`, by default the active context) and ends
 * it however `fn` ends. A throw marks the span failed, with `error.type` from the error's stable
 * `code` (Hermes errors) or its class name, and is rethrown unchanged.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>, parent: Context = context.active()): Promise<T> {
  return hermesTracer().startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      const e = err as { code?: unknown; name?: string; message?: string } | undefined;
      span.setAttribute('error.type', typeof e?.code === 'string' ? e.code : (e?.name ?? 'Error'));
      span.setStatus({ code: SpanStatusCode.ERROR, ...(e?.message ? { message: e.message } : {}) });
      throw err;
    } finally {
      span.end();
    }
  });
}
