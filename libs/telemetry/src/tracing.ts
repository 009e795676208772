import { context, metrics, propagation, trace, type Meter, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator, CompositePropagator, W3CBaggagePropagator } from '@opentelemetry/core';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import { randomUUID } from 'node:crypto';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { ATTR_SERVICE_INSTANCE_ID } from '@opentelemetry/semantic-conventions/incubating';

// The SDK parts load only when something is exported: about 150 ms of a service's start, and most
// runs (tests, `npm run up`) export nothing.
const sdk = {
  traces: () => import('@opentelemetry/sdk-trace-base'),
  otlpTraces: (protocol: OtlpProtocol) =>
    protocol === 'grpc'
      ? import('@opentelemetry/exporter-trace-otlp-grpc')
      : protocol === 'http/protobuf'
        ? import('@opentelemetry/exporter-trace-otlp-proto')
        : import('@opentelemetry/exporter-trace-otlp-http'),
  metrics: () => import('@opentelemetry/sdk-metrics'),
  otlpMetrics: (protocol: OtlpProtocol) =>
    protocol === 'grpc'
      ? import('@opentelemetry/exporter-metrics-otlp-grpc')
      : protocol === 'http/protobuf'
        ? import('@opentelemetry/exporter-metrics-otlp-proto')
        : import('@opentelemetry/exporter-metrics-otlp-http'),
  prometheus: () => import('@opentelemetry/exporter-prometheus'),
  resources: () => import('@opentelemetry/resources'),
};

export interface TelemetryHandle {
  /** Flushes and stops the exporters and the metrics endpoint (no-op when nothing was started). */
  shutdown(): Promise<void>;
  /** True when spans are exported (an OTLP traces endpoint is set). */
  readonly exporting: boolean;
  /** The port of the Prometheus `/metrics` endpoint, when `metricsPort` started one. */
  readonly metricsPort?: number;
}

/** The OTLP protocols Hermes exports in (`OTEL_EXPORTER_OTLP_PROTOCOL`). */
export const OTLP_PROTOCOLS = ['http/json', 'http/protobuf', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** An OTel setting Hermes cannot honour (an OTLP protocol it does not speak): a service does not start on it. */
export class TelemetryConfigError extends Error {
  readonly code = 'invalid_telemetry_setting';
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface TelemetryOptions {
  service: string;
  /** `service.version` on the resource (the service package's version). */
  version?: string;
  env?: NodeJS.ProcessEnv;
  /** Serve Prometheus text at `http://<host>:<metricsPort>/metrics` (METRICS_PORT); off when absent. */
  metricsPort?: number;
  metricsHost?: string;
}

/**
 * Starts OpenTelemetry. Context propagation (W3C traceparent and baggage over NATS headers) is
 * always on, so trace ids flow through a service even when it exports nothing. Spans are exported
 * over OTLP/HTTP (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set;
 * otherwise the API's no-op tracer stays in place and spans cost next to nothing. Metrics go to
 * OTLP (same endpoint, unless `OTEL_METRICS_EXPORTER=none`) and/or to a Prometheus scrape endpoint
 * on `metricsPort`; with neither, meters are no-ops.
 */
export async function startTelemetry(opts: TelemetryOptions): Promise<TelemetryHandle> {
  const env = opts.env ?? process.env;
  installPropagation();
  if (env.OTEL_SDK_DISABLED === 'true') return { exporting: false, shutdown: async () => {} };
  const stops: (() => Promise<void>)[] = [];

  // Per the OTLP spec the signal-specific endpoint is used as is; the base one gets `/v1/traces`.
  const tracesUrl =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined);
  const exporting = tracesUrl !== undefined && env.OTEL_TRACES_EXPORTER !== 'none';
  const metricsUrl = metricsEndpoint(env);
  if (!exporting && !metricsUrl && opts.metricsPort === undefined) return { exporting: false, shutdown: async () => {} };
  // Checked only for a signal that is exported: a protocol nobody uses stops nothing.
  const protocols = {
    traces: exporting ? otlpProtocol(env, 'TRACES') : 'http/json',
    metrics: metricsUrl ? otlpProtocol(env, 'METRICS') : 'http/json',
  } as const;
  const { resourceFromAttributes } = await sdk.resources();
  const resource = resourceFromAttributes(resourceAttributes(opts, env));
  if (exporting) {
    const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([sdk.traces(), sdk.otlpTraces(protocols.traces)]);
    // The URL is passed explicitly: left alone, the exporter reads process.env, not `opts.env`.
    const url = protocols.traces === 'grpc' ? grpcEndpoint(env, 'TRACES') : tracesUrl;
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))] });
    trace.setGlobalTracerProvider(provider);
    stops.push(async () => {
      await provider.shutdown();
      // Lets a later start (tests) register a provider again.
      trace.disable();
    });
  }

  const readers: MetricReader[] = [];
  const metricsSdk = metricsUrl || opts.metricsPort !== undefined ? await sdk.metrics() : undefined;
  if (metricsUrl && metricsSdk) {
    const { OTLPMetricExporter } = await sdk.otlpMetrics(protocols.metrics);
    const { PeriodicExportingMetricReader } = metricsSdk;
    const intervalMs = Number(env.OTEL_METRIC_EXPORT_INTERVAL) || 15_000;
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: protocols.metrics === 'grpc' ? grpcEndpoint(env, 'METRICS') : metricsUrl }),
        exportIntervalMillis: intervalMs,
        exportTimeoutMillis: Math.min(intervalMs, 30_000),
      }),
    );
  }
  let prometheus: PrometheusExporter | undefined;
  if (opts.metricsPort !== undefined) {
    const { PrometheusExporter } = await sdk.prometheus();
    prometheus = new PrometheusExporter({ port: opts.metricsPort, host: opts.metricsHost ?? '127.0.0.1', endpoint: '/metrics', preventServerStart: true });
    await prometheus.startServer();
    // The exporter ships with its own copy of sdk-metrics (same major); only private fields differ.
    readers.push(prometheus as unknown as MetricReader);
  }
  if (readers.length && metricsSdk) {
    const provider = new metricsSdk.MeterProvider({ resource, readers });
    metrics.setGlobalMeterProvider(provider);
    stops.push(async () => {
      await provider.shutdown();
      metrics.disable();
    });
  }
  return {
    exporting,
    ...(prometheus && opts.metricsPort !== undefined ? { metricsPort: opts.metricsPort } : {}),
    shutdown: async () => {
      for (const stop of stops.splice(0)) await stop().catch(() => {});
    },
  };
}

/**
 * The resource: `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`, values percent-encoded), then
 * `service.name` (`OTEL_SERVICE_NAME` over the attribute, else `hermes-<service>`),
 * `service.version` (the package's, else the attribute) and `service.instance.id` (the attribute,
 * else a UUID per process, so replicas of one service tell apart).
 */
export function resourceAttributes(opts: Pick<TelemetryOptions, 'service' | 'version'>, env: NodeJS.ProcessEnv): Record<string, string> {
  const given = parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const version = opts.version ?? given[ATTR_SERVICE_VERSION];
  return {
    ...given,
    [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || given[ATTR_SERVICE_NAME] || `hermes-${opts.service}`,
    ...(version ? { [ATTR_SERVICE_VERSION]: version } : {}),
    [ATTR_SERVICE_INSTANCE_ID]: given[ATTR_SERVICE_INSTANCE_ID] || randomUUID(),
  };
}

/** `OTEL_RESOURCE_ATTRIBUTES` as the OTel spec reads it: comma-separated `key=value`, values percent-decoded; a malformed pair is skipped. */
export function parseResourceAttributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    try {
      if (key) out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // Not valid percent-encoding: the spec says to discard the pair.
    }
  }
  return out;
}

/** `OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else http/json (what Hermes always sent). */
export function otlpProtocol(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): OtlpProtocol {
  const setting = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL` : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = env[setting]?.trim() || 'http/json';
  if ((OTLP_PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
  throw new TelemetryConfigError(setting, `${setting}=${value} is not an OTLP protocol Hermes exports in (${OTLP_PROTOCOLS.join(', ')})`);
}

let propagationInstalled = false;

/** Registers the context manager and the W3C trace context and baggage propagators once per process (idempotent). */
export function installPropagation(): void {
  if (propagationInstalled) return;
  propagationInstalled = true;
  const cm = new AsyncLocalStorageContextManager();
  cm.enable();
  context.setGlobalContextManager(cm);
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
}

/** Over gRPC an endpoint names the collector itself: no `/v1/<signal>` path is added to the base one. */
function grpcEndpoint(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): string | undefined {
  return env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] || env.OTEL_EXPORTER_OTLP_ENDPOINT;
}

function metricsEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_METRICS_EXPORTER === 'none') return undefined;
  return (
    env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ||
    (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/metrics` : undefined)
  );
}

/** The meter Hermes code records its metrics with (a no-op until a MeterProvider is registered). */
export function hermesMeter(): Meter {
  return metrics.getMeter('hermes');
}

/** The tracer Hermes code uses for its own spans. */
export function hermesTracer(): Tracer {
  return trace.getTracer('hermes');
}
