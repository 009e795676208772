import { beforeAll, describe, expect, it } from 'vitest';
import { headers } from '@nats-io/transport-node';
import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import { contextFromTraceparent, currentTraceparent, extractTraceContext, injectTraceContext } from '@hermes/contracts';
import { installPropagation } from '@hermes/telemetry';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';
const traceparent = `00-${traceId}-${spanId}-01`;

beforeAll(() => installPropagation());

describe('trace headers', () => {
  it('inject then extract round-trips the active span context through NATS headers', () => {
    const h = headers();
    injectTraceContext(h, trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: 1 }));

    expect(h.get('traceparent')).toBe(traceparent);
    expect(trace.getSpanContext(extractTraceContext(h))).toMatchObject({ traceId, spanId, traceFlags: 1, isRemote: true });
  });

  it('extract accepts a canonically cased Traceparent header', () => {
    const h = headers();
    h.set('Traceparent', traceparent);

    expect(trace.getSpanContext(extractTraceContext(h))?.traceId).toBe(traceId);
  });

  it('extract without headers, or with a malformed traceparent, gives a context without a span', () => {
    const bad = headers();
    bad.set('traceparent', 'not-a-traceparent');

    expect(trace.getSpanContext(extractTraceContext(undefined))).toBeUndefined();
    expect(trace.getSpanContext(extractTraceContext(bad))).toBeUndefined();
  });

  it('currentTraceparent and contextFromTraceparent carry a trace through a CloudEvent attribute', () => {
    const ctx = contextFromTraceparent(traceparent);

    expect(context.with(ctx, () => currentTraceparent())).toBe(traceparent);
    expect(currentTraceparent()).toBeUndefined();
    expect(contextFromTraceparent(undefined)).toBe(ROOT_CONTEXT);
  });
});
