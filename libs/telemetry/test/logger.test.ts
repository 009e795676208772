import { beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import { createLogger, hashUserId, installPropagation, runForTask } from '@hermes/telemetry';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';

/** A logger writing into an array, one parsed JSON object per line. */
function capturingLogger(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: 'dispatcher',
    level,
    destination: {
      write: (chunk: string) =>
        void chunk
          .split('\n')
          .filter(Boolean)
          .forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
    },
  });
  return { logger, lines };
}

beforeAll(() => installPropagation());

describe('createLogger', () => {
  it('writes one JSON object per line with service, level label, ISO time and message', () => {
    const { logger, lines } = capturingLogger();

    logger.info({ task_id: 't1' }, 'task accepted');

    expect(lines).toEqual([{ level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), service: 'dispatcher', task_id: 't1', msg: 'task accepted' }]);
  });

  it('adds trace_id and span_id while a span context is active, across awaits, and not outside it', async () => {
    const { logger, lines } = capturingLogger();
    const traced = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: 1 });

    logger.info('before');
    await context.with(traced, async () => {
      logger.info('inside');
      await sleep(5);
      logger.info('after an await');
    });
    logger.info('after');

    expect(lines.map((l) => [l.msg, l.trace_id, l.span_id])).toEqual([
      ['before', undefined, undefined],
      ['inside', traceId, spanId],
      ['after an await', traceId, spanId],
      ['after', undefined, undefined],
    ]);
  });

  it('drops lines below the level', () => {
    const { logger, lines } = capturingLogger('warn');

    logger.info('quiet');
    logger.warn('loud');

    expect(lines.map((l) => l.msg)).toEqual(['loud']);
  });

  it('redacts credentials in logged objects', () => {
    const { logger, lines } = capturingLogger();

    logger.info({ endpoint: { url: 'https://api.example', apiKey: 'sk-secret' }, nats: { password: 'p', token: 't' } }, 'configured');

    expect(JSON.stringify(lines)).not.toMatch(/sk-secret|"p"|"t"/);
    expect(lines[0]).toMatchObject({ endpoint: { url: 'https://api.example', apiKey: '[redacted]' }, nats: { password: '[redacted]', token: '[redacted]' } });
  });

  it('redacts credentials logged as top-level fields', () => {
    const { logger, lines } = capturingLogger();

    logger.info({ apiKey: 'sk-secret', token: 'tok-secret', authorization: 'Bearer abc', user: 'u1' }, 'request');

    expect(JSON.stringify(lines)).not.toMatch(/sk-secret|tok-secret|Bearer abc/);
    expect(lines[0]).toMatchObject({ apiKey: '[redacted]', token: '[redacted]', authorization: '[redacted]', user: 'u1' });
  });

  it('serialises an error with its type and message', () => {
    const { logger, lines } = capturingLogger();

    logger.error({ err: new TypeError('bad thing') }, 'failed');

    expect(lines[0]).toMatchObject({ level: 'error', err: { type: 'TypeError', message: 'bad thing' } });
  });
});

describe('createLogger with a task in context', () => {
  function logTo(opts: { userId?: 'plain' | 'hash' | 'omit'; userIdSalt?: string } = {}) {
    const lines: Record<string, unknown>[] = [];
    const raw: string[] = [];
    const logger = createLogger({
      service: 'runtime',
      ...opts,
      destination: {
        write: (chunk: string) =>
          void chunk
            .split('\n')
            .filter(Boolean)
            .forEach((l) => (raw.push(l), lines.push(JSON.parse(l) as Record<string, unknown>))),
      },
    });
    return { logger, lines, raw };
  }

  it('adds task_id and user_id from the task context (baggage) to every line inside it, across awaits, and not outside', async () => {
    const { logger, lines } = logTo();

    logger.info('before');
    await runForTask({ task_id: 't_1', user_id: 'alice' }, async () => {
      logger.info('inside');
      await sleep(2);
      logger.child({ job_id: 'j1' }).info('child after an await');
    });
    logger.info('after');

    expect(lines.map((l) => [l.msg, l.task_id, l.user_id])).toEqual([
      ['before', undefined, undefined],
      ['inside', 't_1', 'alice'],
      ['child after an await', 't_1', 'alice'],
      ['after', undefined, undefined],
    ]);
  });

  it('does not repeat a key a child logger already binds', () => {
    const { logger, raw } = logTo();

    runForTask({ task_id: 't_1', user_id: 'alice' }, () => logger.child({ task_id: 't_1' }).info('bound'));

    expect(raw[0]!.match(/"task_id"/g)).toHaveLength(1);
  });

  it('LOG_USER_ID=hash writes a salted pseudonym everywhere the user id appears, never the id itself', () => {
    const { logger, lines, raw } = logTo({ userId: 'hash', userIdSalt: 's3cret' });

    runForTask({ task_id: 't_1', user_id: 'alice' }, () => logger.info('from context'));
    logger.child({ user_id: 'alice' }).info('from a binding');
    logger.info({ user_id: 'alice' }, 'from a field');

    const expected = hashUserId('alice', 's3cret');
    expect(expected).toMatch(/^u_[0-9a-f]{16}$/);
    expect(expected).not.toBe(hashUserId('alice', 'other-salt'));
    expect(lines.map((l) => l.user_id)).toEqual([expected, expected, expected]);
    expect(raw.join('\n')).not.toContain('alice');
  });

  it('LOG_USER_ID=omit leaves the user id out of every line', () => {
    const { logger, lines, raw } = logTo({ userId: 'omit' });

    runForTask({ task_id: 't_1', user_id: 'alice' }, () => logger.info('from context'));
    logger.child({ user_id: 'alice' }).info({ user_id: 'alice' }, 'bound and field');

    expect(lines.every((l) => !('user_id' in l))).toBe(true);
    expect(lines[0]!.task_id).toBe('t_1');
    expect(raw.join('\n')).not.toContain('alice');
  });
});
