import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, context, propagation, trace } from '@opentelemetry/api';
import { hermesMeter, hermesTracer, otlpProtocol, parseResourceAttributes, resourceAttributes, startTelemetry } from '@hermes/telemetry';

/** A stand-in OTLP/HTTP collector that records what it is sent. */
let collector: Server;
let collectorUrl: string;
const received: { path: string; body: string }[] = [];

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('latin1') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => collector.close(() => r()));
});

describe('startTelemetry', () => {
  it('without an OTLP endpoint exports nothing but still propagates W3C trace context', async () => {
    const handle = await startTelemetry({ service: 'runtime', env: {} });
    const carrier: Record<string, string> = {};
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';

    propagation.inject(trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: 1 }), carrier);
    const seenAfterAwait = await context.with(propagation.extract(ROOT_CONTEXT, carrier), async () => {
      await new Promise((r) => setTimeout(r, 1));
      return trace.getSpanContext(context.active())?.traceId;
    });

    expect(handle.exporting).toBe(false);
    // The API's no-op tracer: spans cost next to nothing and record nothing.
    expect(hermesTracer().startSpan('not-recorded').isRecording()).toBe(false);
    expect(carrier.traceparent).toBe(`00-${traceId}-00f067aa0ba902b7-01`);
    expect(seenAfterAwait).toBe(traceId);
    await handle.shutdown();
  });

  it('OTEL_SDK_DISABLED=true turns export off even with an endpoint', async () => {
    const handle = await startTelemetry({ service: 'runtime', env: { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_SDK_DISABLED: 'true' } });

    expect(handle.exporting).toBe(false);
    await handle.shutdown();
  });

  it('with OTEL_EXPORTER_OTLP_ENDPOINT in the given env, spans go to <endpoint>/v1/traces under the service name', async () => {
    const handle = await startTelemetry({ service: 'runtime', env: { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl } });

    hermesTracer().startSpan('exported-span-for-test').end();
    await handle.shutdown();

    expect(handle.exporting).toBe(true);
    const traces = received.filter((r) => r.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    expect(traces.map((t) => t.body).join('')).toContain('exported-span-for-test');
    expect(traces.map((t) => t.body).join('')).toContain('hermes-runtime');
  });
});

describe('metrics endpoint', () => {
  it('with metricsPort, serves the meters as Prometheus text at /metrics, and stops serving on shutdown', async () => {
    const port = await freePort();
    const handle = await startTelemetry({ service: 'dispatcher', env: {}, metricsPort: port, metricsHost: '127.0.0.1' });
    hermesMeter().createCounter('hermes.test.things', { description: 'things counted by the test' }).add(3, { kind: 'a' });

    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    const text = await res.text();
    await handle.shutdown();

    expect(handle.metricsPort).toBe(port);
    expect(res.status).toBe(200);
    expect(text).toMatch(/# HELP hermes_test_things_total things counted by the test/);
    expect(text).toMatch(/hermes_test_things_total\{[^}]*kind="a"[^}]*\} 3/);
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('without metricsPort or an OTLP endpoint, meters are no-ops and no port is served', async () => {
    const handle = await startTelemetry({ service: 'dispatcher', env: {} });

    expect(handle.metricsPort).toBeUndefined();
    expect(hermesMeter().createCounter('hermes.test.noop')).toBeDefined();
    await handle.shutdown();
  });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('resource and protocol settings', () => {
  it('reads OTEL_RESOURCE_ATTRIBUTES as the spec says: comma-separated pairs, percent-decoded, malformed pairs skipped', () => {
    expect(parseResourceAttributes('a=1, b = two ,c=x%2Cy,=nokey,novalue,d=%E0%A4%A,e=')).toEqual({ a: '1', b: 'two', c: 'x,y', e: '' });
    expect(parseResourceAttributes('')).toEqual({});
  });

  it('puts OTEL_SERVICE_NAME over the attribute, the package version over the attribute, and an instance id per process unless given', () => {
    const given = resourceAttributes(
      { service: 'runtime', version: '1.2.3' },
      { OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs,service.version=0.0.1,service.instance.id=pod-7,k8s.namespace.name=hermes' },
    );
    expect(given).toEqual({ 'service.name': 'from-attrs', 'service.version': '1.2.3', 'service.instance.id': 'pod-7', 'k8s.namespace.name': 'hermes' });
    const named = resourceAttributes({ service: 'runtime' }, { OTEL_SERVICE_NAME: 'rt', OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs' });
    expect(named['service.name']).toBe('rt');
    const a = resourceAttributes({ service: 'runtime' }, {});
    const b = resourceAttributes({ service: 'runtime' }, {});
    expect(a['service.name']).toBe('hermes-runtime');
    expect(a['service.instance.id']).not.toBe(b['service.instance.id']);
  });

  it('takes the signal protocol over the general one, http/json by default, and refuses what it cannot export', () => {
    expect(otlpProtocol({}, 'TRACES')).toBe('http/json');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, 'METRICS')).toBe('http/protobuf');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }, 'TRACES')).toBe('http/json');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'TRACES')).toBe('grpc');
    expect(() => otlpProtocol({ OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/thrift' }, 'METRICS')).toThrow(/OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http\/thrift/);
  });
});
