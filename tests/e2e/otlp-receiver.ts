import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the OTLP/HTTP JSON exporter sends it, flattened with its service. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
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

/**
 * A tiny OTLP/HTTP collector: takes `POST /v1/traces` in the JSON encoding (what
 * @opentelemetry/exporter-trace-otlp-http sends) and keeps every span; other signals are
 * acknowledged and dropped.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        contentTypes.add(String(req.headers['content-type']));
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
        };
        for (const rs of body.resourceSpans ?? []) {
          const service = String(attributesOf(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              const parent = s.parentSpanId as string | undefined;
              spans.push({
                service,
                traceId: s.traceId as string,
                spanId: s.spanId as string,
                ...(parent ? { parentSpanId: parent } : {}),
                name: s.name as string,
                kind: s.kind as number,
                attributes: attributesOf(s.attributes as OtlpAttribute[]),
                links: ((s.links as { traceId: string; spanId: string }[] | undefined) ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
                ...(s.status ? { status: s.status as ReceivedSpan['status'] } : {}),
              });
            }
          }
        }
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
