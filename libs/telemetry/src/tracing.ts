import { context, metrics, propagation, trace, type Meter, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator, CompositePropagator, W3CBaggagePropagator } from '@opentelemetry/core';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export interface TelemetryHandle {
  /** Flushes and stops the exporter (no-op when tracing export is off). */
  shutdown(): Promise<void>;
  readonly exporting: boolean;
}

/**
 * Starts OpenTelemetry. Context propagation (W3C traceparent over NATS headers) is always on, so
 * trace ids flow through a service even when it exports nothing; span export starts only when
 * the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set.
 */
export function startTelemetry(opts: { service: string; env?: NodeJS.ProcessEnv }): TelemetryHandle {
  const env = opts.env ?? process.env;
  // Per the OTLP spec the signal-specific endpoint is used as is; the base one gets `/v1/traces`.
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!endpoint || env.OTEL_SDK_DISABLED === 'true') {
    installPropagation();
    return { exporting: false, shutdown: async () => {} };
  }
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME ?? `hermes-${opts.service}` }),
    // The URL is passed explicitly: left alone, the exporter reads process.env, not `opts.env`.
    traceExporter: new OTLPTraceExporter({ url: endpoint }),
    ...(metricsEndpoint(env) ? { metricReader: new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: metricsEndpoint(env)! }), exportIntervalMillis: 15_000 }) } : {}),
    textMapPropagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    contextManager: new AsyncLocalStorageContextManager(),
    instrumentations: [],
  });
  sdk.start();
  return { exporting: true, shutdown: () => sdk.shutdown() };
}

let propagationInstalled = false;

/** Registers the context manager and W3C propagator once per process (idempotent). */
export function installPropagation(): void {
  if (propagationInstalled) return;
  propagationInstalled = true;
  const cm = new AsyncLocalStorageContextManager();
  cm.enable();
  context.setGlobalContextManager(cm);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

function metricsEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_METRICS_EXPORTER === 'none') return undefined;
  return env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/metrics` : undefined);
}

/** The meter Hermes code records its metrics with (a no-op until a MeterProvider is registered). */
export function hermesMeter(): Meter {
  return metrics.getMeter('hermes');
}

/** The tracer Hermes code uses for its own spans. */
export function hermesTracer(): Tracer {
  return trace.getTracer('hermes');
}
