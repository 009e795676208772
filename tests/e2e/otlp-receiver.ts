import * as grpc from '@grpc/grpc-js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP exporter sends it (JSON or protobuf), flattened with its service and resource. */
export interface ReceivedSpan {
  service: string;
  /** The resource's attributes (service.name, service.version, service.instance.id, OTEL_RESOURCE_ATTRIBUTES...). */
  resource: Record<string, unknown>;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types the exporters sent, to prove what the test decodes. */
  contentTypes: Set<string>;
  close(): Promise<void>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } };
type OtlpAttribute = { key: string; value: OtlpValue };

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: OtlpAttribute[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/** The JSON encoding of ExportTraceServiceRequest (what @opentelemetry/exporter-trace-otlp-http sends). */
function spansFromJson(body: Buffer): ReceivedSpan[] {
  const parsed = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
  };
  const out: ReceivedSpan[] = [];
  for (const rs of parsed.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const parent = s.parentSpanId as string | undefined;
        out.push({
          service: String(resource['service.name']),
          resource,
          traceId: s.traceId as string,
          spanId: s.spanId as string,
          ...(parent ? { parentSpanId: parent } : {}),
          name: s.name as string,
          kind: s.kind as number,
          attributes: attributesOf(s.attributes as OtlpAttribute[]),
          events: ((s.events as { name: string; attributes?: OtlpAttribute[] }[] | undefined) ?? []).map((e) => ({
            name: e.name,
            attributes: attributesOf(e.attributes),
          })),
          links: ((s.links as { traceId: string; spanId: string }[] | undefined) ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          ...(s.status ? { status: s.status as ReceivedSpan['status'] } : {}),
        });
      }
    }
  }
  return out;
}

// --- The protobuf encoding (what @opentelemetry/exporter-trace-otlp-proto sends), read with the
// field numbers of opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto.
type Field = { wire: number; varint?: bigint; bytes?: Buffer };

/** A protobuf message's fields by number, in order (no schema: the caller knows which is which). */
function fields(buf: Buffer): Map<number, Field[]> {
  const out = new Map<number, Field[]>();
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
    }
  };
  while (at < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    let f: Field;
    if (wire === 0) f = { wire, varint: varint() };
    else if (wire === 1) f = { wire, bytes: buf.subarray(at, (at += 8)) };
    else if (wire === 2) {
      const len = Number(varint());
      f = { wire, bytes: buf.subarray(at, (at += len)) };
    } else if (wire === 5) f = { wire, bytes: buf.subarray(at, (at += 4)) };
    else throw new Error(`unsupported protobuf wire type ${wire}`);
    out.set(no, [...(out.get(no) ?? []), f]);
  }
  return out;
}

const all = (m: Map<number, Field[]>, no: number) => (m.get(no) ?? []).map((f) => f.bytes!).filter(Boolean);
const one = (m: Map<number, Field[]>, no: number) => m.get(no)?.[0];
const text = (m: Map<number, Field[]>, no: number) => one(m, no)?.bytes?.toString('utf8') ?? '';
const hex = (m: Map<number, Field[]>, no: number) => one(m, no)?.bytes?.toString('hex') ?? '';

function anyValue(buf: Buffer): unknown {
  const m = fields(buf);
  if (m.has(1)) return text(m, 1);
  if (m.has(2)) return one(m, 2)!.varint !== 0n;
  if (m.has(3)) return Number(BigInt.asIntN(64, one(m, 3)!.varint!));
  if (m.has(4)) return one(m, 4)!.bytes!.readDoubleLE(0);
  if (m.has(5)) return all(fields(one(m, 5)!.bytes!), 1).map(anyValue);
  return undefined;
}

const protoAttributes = (list: Buffer[]) =>
  Object.fromEntries(
    list.map((kv) => {
      const m = fields(kv);
      return [text(m, 1), one(m, 2)?.bytes ? anyValue(one(m, 2)!.bytes!) : undefined];
    }),
  );

function spansFromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rsBuf of all(fields(body), 1)) {
    const rs = fields(rsBuf);
    const resource = protoAttributes(all(fields(one(rs, 1)?.bytes ?? Buffer.alloc(0)), 1));
    for (const ssBuf of all(rs, 2)) {
      for (const spanBuf of all(fields(ssBuf), 2)) {
        const s = fields(spanBuf);
        const parent = hex(s, 4);
        const status = one(s, 15)?.bytes ? fields(one(s, 15)!.bytes!) : undefined;
        out.push({
          service: String(resource['service.name']),
          resource,
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          ...(parent ? { parentSpanId: parent } : {}),
          name: text(s, 5),
          kind: Number(one(s, 6)?.varint ?? 0n),
          attributes: protoAttributes(all(s, 9)),
          events: all(s, 11).map((e) => {
            const ev = fields(e);
            return { name: text(ev, 2), attributes: protoAttributes(all(ev, 3)) };
          }),
          links: all(s, 13).map((l) => {
            const lk = fields(l);
            return { traceId: hex(lk, 1), spanId: hex(lk, 2) };
          }),
          ...(status ? { status: { code: Number(one(status, 3)?.varint ?? 0n), ...(status.has(2) ? { message: text(status, 2) } : {}) } } : {}),
        });
      }
    }
  }
  return out;
}

/**
 * A tiny OTLP/HTTP collector: takes `POST /v1/traces` in the JSON encoding
 * (@opentelemetry/exporter-trace-otlp-http) or the protobuf one (`application/x-protobuf`,
 * exporter-trace-otlp-proto) and keeps every span; other signals are acknowledged and dropped.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const type = String(req.headers['content-type']);
        contentTypes.add(type);
        const body = Buffer.concat(chunks);
        spans.push(...(type.startsWith('application/x-protobuf') ? spansFromProtobuf(body) : spansFromJson(body)));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * A tiny OTLP/gRPC collector (what @opentelemetry/exporter-trace-otlp-grpc sends to): the trace
 * service's Export keeps every span, read with the same protobuf decoder; metrics are acknowledged
 * and dropped. The payload is taken as raw bytes, so no .proto files are needed.
 */
export async function startOtlpGrpcReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server = new grpc.Server();
  const raw = {
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  };
  const exportOf = (path: string) => ({ Export: { ...raw, path } });
  server.addService(exportOf('/opentelemetry.proto.collector.trace.v1.TraceService/Export'), {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      contentTypes.add('application/grpc');
      spans.push(...spansFromProtobuf(call.request));
      done(null, Buffer.alloc(0));
    },
  });
  server.addService(exportOf('/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'), {
    Export: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => done(null, Buffer.alloc(0)),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((r) => server.tryShutdown(() => r())),
  };
}
