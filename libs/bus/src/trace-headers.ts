import { context, propagation, ROOT_CONTEXT, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import type { MsgHdrs } from '@nats-io/transport-node';

const setter: TextMapSetter<MsgHdrs> = {
  set: (carrier, key, value) => carrier.set(key, value),
};
const getter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (carrier) => (carrier ? carrier.keys() : []),
  get: (carrier, key) => {
    if (!carrier) return undefined;
    // NATS keeps header case as sent; accept both the W3C lower-case and canonical forms.
    const v = carrier.get(key) || carrier.get(key.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase()));
    return v === '' ? undefined : v;
  },
};

/** Writes the active trace context (W3C `traceparent`/`tracestate`) into NATS headers. */
export function injectTraceContext(headers: MsgHdrs, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers, setter);
}

/** Reads the trace context a publisher put in the headers (root context when there is none). */
export function extractTraceContext(headers: MsgHdrs | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, headers, getter);
}

/** The `traceparent` of the active context, for places that are not NATS headers (CloudEvents). */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** A context continuing the given `traceparent` string (e.g. from a CloudEvent extension). */
export function contextFromTraceparent(traceparent: string | undefined, tracestate?: string): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent, ...(tracestate ? { tracestate } : {}) });
}
