import { pino, type Logger, type LoggerOptions } from 'pino';
import { trace, context } from '@opentelemetry/api';

export type { Logger };

const SECRET_KEYS = ['apiKey', 'api_key', 'password', 'authorization', 'token'];

/**
 * A pino JSON logger whose every line carries `service` and, while a span is active, the
 * `trace_id`/`span_id` ops need to jump from a log line to the task's trace.
 */
export function createLogger(opts: { service: string; level?: string; destination?: pino.DestinationStream }): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service: opts.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin() {
      const span = trace.getSpan(context.active());
      if (!span) return {};
      const sc = span.spanContext();
      return { trace_id: sc.traceId, span_id: sc.spanId };
    },
    // `*.key` only matches one level down, so top-level fields are listed too.
    redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`]), censor: '[redacted]' },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
