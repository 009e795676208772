import { context, propagation, ROOT_CONTEXT, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';

/**
 * The message headers trace context travels in: NATS `MsgHdrs` has this shape (an absent header
 * reads as ''). Structural, so the contracts and the tool SDK need no NATS client to state it.
 */
export interface TraceHeaders {
  get(key: string): string;
  set(key: string, value: string): void;
  keys(): string[];
}

const setter: TextMapSetter<TraceHeaders> = {
  set: (carrier, key, value) => carrier.set(key, value),
};
const getter: TextMapGetter<TraceHeaders | undefined> = {
  keys: (carrier) => (carrier ? carrier.keys() : []),
  get: (carrier, key) => {
    if (!carrier) return undefined;
    // NATS keeps header case as sent; accept both the W3C lower-case and canonical forms.
    const v = carrier.get(key) || carrier.get(key.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase()));
    return v === '' ? undefined : v;
  },
};

/** Writes the active trace context (W3C `traceparent`/`tracestate`) into NATS headers. */
export function injectTraceContext(headers: TraceHeaders, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers, setter);
}

/** Reads the trace context a publisher put in the headers (root context when there is none). */
export function extractTraceContext(headers: TraceHeaders | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, headers, getter);
}

/** The `traceparent` of the active context, for places that are not NATS headers (CloudEvents). */
export function currentTraceparent(): string | undefined {
  return currentTraceContext().traceparent;
}

/**
 * The active context's W3C `traceparent` and `tracestate`, for the CloudEvents distributed
 * tracing extension attributes (each absent when there is none).
 */
export function currentTraceContext(ctx: Context = context.active()): { traceparent?: string; tracestate?: string } {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return {
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
}

/** A context continuing the given `traceparent` string (e.g. from a CloudEvent extension). */
export function contextFromTraceparent(traceparent: string | undefined, tracestate?: string): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent, ...(tracestate ? { tracestate } : {}) });
}
