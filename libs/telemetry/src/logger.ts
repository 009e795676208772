import { createHash } from 'node:crypto';
import { pino, type Logger, type LoggerOptions } from 'pino';
import { trace, context } from '@opentelemetry/api';
import { activeTaskFields } from './task-context.js';

export type { Logger };

const SECRET_KEYS = ['apiKey', 'api_key', 'password', 'authorization', 'token'];

/** How `user_id` appears in log lines (LOG_USER_ID): as is, as a salted hash, or not at all. */
export type UserIdLogMode = 'plain' | 'hash' | 'omit';

export interface LoggerCreateOptions {
  service: string;
  level?: string;
  destination?: pino.DestinationStream;
  /** Default `plain`; `hash` writes `u_` + 16 hex digits of sha256(salt + user id). */
  userId?: UserIdLogMode;
  /** Salt for `hash` (LOG_USER_ID_SALT), so hashes of guessable ids cannot be looked up. */
  userIdSalt?: string;
}

/**
 * A pino JSON logger whose every line carries `service` and, while a span is active, the
 * `trace_id`/`span_id` ops need to jump from a log line to the task's trace. While a task is
 * being handled (its id travels as baggage, see withTaskFields) lines also carry `task_id` and
 * `user_id`, shown as LOG_USER_ID says.
 */
export function createLogger(opts: LoggerCreateOptions): Logger {
  const mode = opts.userId ?? 'plain';
  // Keys a child logger already binds are not added again (a JSON line must not repeat a key).
  const boundKeys = new WeakMap<object, Set<string>>();
  const keysOf = (logger: Logger): Set<string> => {
    let keys = boundKeys.get(logger);
    if (!keys) boundKeys.set(logger, (keys = new Set(Object.keys(logger.bindings()))));
    return keys;
  };
  const options: LoggerOptions = {
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service: opts.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin(_obj, _level, logger) {
      const ctx = context.active();
      const out: Record<string, string> = {};
      const sc = trace.getSpanContext(ctx);
      if (sc) {
        out.trace_id = sc.traceId;
        out.span_id = sc.spanId;
      }
      const task = activeTaskFields(ctx);
      if (task.task_id || task.user_id) {
        const bound = keysOf(logger as Logger);
        if (task.task_id && !bound.has('task_id')) out.task_id = task.task_id;
        if (task.user_id && !bound.has('user_id')) out.user_id = task.user_id;
      }
      return out;
    },
    // Serializers apply to child bindings and to each line's fields alike, so no user id slips through.
    ...(mode === 'plain' ? {} : { serializers: { user_id: (v: unknown) => (mode === 'omit' ? undefined : hashUserId(v, opts.userIdSalt ?? '')) } }),
    // `*.key` only matches one level down, so top-level fields are listed too.
    redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`]), censor: '[redacted]' },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** The stable pseudonym `hash` mode logs for a user id. */
export function hashUserId(userId: unknown, salt = ''): string | undefined {
  if (typeof userId !== 'string') return undefined;
  return `u_${createHash('sha256').update(`${salt}\u0000${userId}`).digest('hex').slice(0, 16)}`;
}
