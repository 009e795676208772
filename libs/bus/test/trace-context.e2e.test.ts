import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, context, trace, type Span } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Bus } from '@hermes/bus';
import { request, serve, startWorkConsumer, submitTask } from '@hermes/bus';
import { DEFAULT_TEAM, contracts } from '@hermes/contracts';
import { installPropagation } from '@hermes/telemetry';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { connectBus, eventually, runtimeJob, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

const exporter = new InMemorySpanExporter();
let nats: NatsServerHandle;
const buses: Bus[] = [];

async function open(): Promise<Bus> {
  const bus = await connectBus(nats.url, { prefix: uniquePrefix('trace') });
  buses.push(bus);
  return bus;
}

/** Runs `fn` inside a new recording span and returns both the span and what `fn` returned. */
async function inSpan<T>(name: string, fn: () => Promise<T>): Promise<{ span: Span; result: T }> {
  const span = trace.getTracer('bus-test').startSpan(name);
  try {
    const result = await context.with(trace.setSpan(context.active(), span), fn);
    return { span, result };
  } finally {
    span.end();
  }
}

function activeTraceId(): string | undefined {
  return trace.getSpanContext(context.active())?.traceId;
}

beforeAll(async () => {
  installPropagation();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('trace context over NATS', () => {
  it('a request carries traceparent and the responder handles it inside a child span of the caller', async () => {
    const bus = await open();
    const seen: { header: string | undefined; traceId: string | undefined }[] = [];
    serve(bus, contracts.toolsList, async (_req, ctx) => {
      seen.push({ header: ctx.headers?.get('traceparent'), traceId: activeTraceId() });
      return { tools: [] };
    });

    const { span } = await inSpan('caller', () => request(bus, contracts.toolsList, {}));

    const caller = span.spanContext();
    expect(seen).toEqual([{ header: `00-${caller.traceId}-${caller.spanId}-01`, traceId: caller.traceId }]);
    const server = exporter.getFinishedSpans().find((s) => s.name === 'process toolsList');
    expect(server?.spanContext().traceId).toBe(caller.traceId);
    expect(server?.parentSpanContext?.spanId).toBe(caller.spanId);
  });

  it('a published job carries traceparent and the work consumer handles it in the same trace', async () => {
    const bus = await open();
    await bus.ensureStreams(['runtimeJobs']);
    await bus.ensureConsumers(['runtimeJobs']);
    const seen: { header: string | undefined; traceId: string | undefined }[] = [];
    await startWorkConsumer(bus, { stream: bus.subjects.streams.runtimeJobs, durable: bus.subjects.consumers.runtimeJobs }, async (msg) => {
      seen.push({ header: msg.headers?.get('traceparent'), traceId: activeTraceId() });
    });

    const { span } = await inSpan('dispatch', () => bus.publish(contracts.runtimeJobs, runtimeJob('traced')));

    const caller = span.spanContext();
    await eventually(() => (seen.length > 0 ? true : undefined), 5_000, 'the job');
    expect(seen).toEqual([{ header: `00-${caller.traceId}-${caller.spanId}-01`, traceId: caller.traceId }]);
  });

  it('a trace context set without a recording span (traceparent from elsewhere) is still propagated', async () => {
    const bus = await open();
    const seen: (string | undefined)[] = [];
    serve(bus, contracts.toolsList, async () => {
      seen.push(activeTraceId());
      return { tools: [] };
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const remote = trace.setSpanContext(context.active(), { traceId, spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });

    await context.with(remote, () => request(bus, contracts.toolsList, {}));

    expect(seen).toEqual([traceId]);
  });

  it("a submitted task carries a publish span's traceparent, a child of the caller's span, in the CloudEvent and the headers", async () => {
    const bus = await open();
    await bus.ensureStreams(['taskSubmit']);

    const { span, result } = await inSpan('submit', () =>
      submitTask(bus, { user_id: 'u1', goal: 'trace me' }, { team: DEFAULT_TEAM, source: '/hermes/test', id: 'e1' }),
    );

    const stored = await natsHandles(bus).jsm.streams.getMessage(bus.subjects.streams.taskSubmit, { seq: 1 });
    const caller = span.spanContext();
    const producer = exporter.getFinishedSpans().find((s) => s.name === 'publish taskSubmit' && s.spanContext().traceId === caller.traceId);
    expect(producer?.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(producer?.attributes['hermes.task.id']).toBe(result.taskId);
    const expected = `00-${caller.traceId}-${producer!.spanContext().spanId}-01`;
    expect(stored?.json<{ traceparent?: string }>().traceparent).toBe(expected);
    expect(stored?.header.get('traceparent')).toBe(expected);
  });

  it('a request made outside any trace sends no traceparent', async () => {
    const bus = await open();
    const headers: (string | undefined)[] = [];
    serve(bus, contracts.toolsList, async (_req, ctx) => {
      headers.push(ctx.headers?.get('traceparent'));
      return { tools: [] };
    });

    await context.with(ROOT_CONTEXT, () => request(bus, contracts.toolsList, {}));

    expect(headers).toHaveLength(1);
    expect(headers[0] ?? '').toBe('');
  });
});
