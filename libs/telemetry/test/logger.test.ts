import { beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import { createLogger, installPropagation } from '@hermes/telemetry';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';

/** A logger writing into an array, one parsed JSON object per line. */
function capturingLogger(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: 'dispatcher',
    level,
    destination: { write: (chunk: string) => void chunk.split('\n').filter(Boolean).forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)) },
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
