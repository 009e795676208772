import { createHash } from 'node:crypto';
import type { ValidationIssue } from './schemas/common.js';

/** Reads one NATS header (case-insensitively, as the server does not normalise them). */
export type HeaderLookup = (name: string) => string | undefined;

const BINARY_ATTRIBUTES = ['specversion', 'type', 'source', 'id', 'time', 'subject', 'dataschema', 'traceparent', 'tracestate'];

/**
 * The task id for a submission: a pure function of the CloudEvent's (source, id), which the
 * CloudEvents spec makes unique. A retried publish therefore names the same task even when the
 * JetStream duplicate window has passed, and a submitter can compute the id before publishing.
 */
export function taskIdFor(source: string, id: string): string {
  return `t_${createHash('sha256').update(source).update('\u0000').update(id).digest('hex').slice(0, 32)}`;
}

export type DecodedEvent = { ok: true; event: Record<string, unknown>; mode: 'structured' | 'binary' } | { ok: false; issues: ValidationIssue[] };

/**
 * Turns a NATS message into a structured CloudEvent object (not yet schema-validated).
 * Binary mode: attributes in `ce-*` headers, `data` as the body. Structured mode: the whole
 * event as JSON in the body.
 */
export function decodeCloudEvent(body: Uint8Array, header: HeaderLookup): DecodedEvent {
  const text = new TextDecoder().decode(body);
  let parsed: unknown;
  try {
    parsed = text.length === 0 ? undefined : JSON.parse(text);
  } catch (err) {
    return { ok: false, issues: [{ path: '', message: `body is not valid JSON: ${(err as Error).message}`, keyword: 'json' }] };
  }
  if (header('ce-specversion') !== undefined) {
    const event: Record<string, unknown> = {};
    for (const attr of BINARY_ATTRIBUTES) {
      const v = header(`ce-${attr}`);
      if (v !== undefined) event[attr] = v;
    }
    const contentType = header('content-type');
    if (contentType !== undefined) event.datacontenttype = contentType.split(';')[0]!.trim();
    event.data = parsed;
    return { ok: true, event, mode: 'binary' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { ok: false, issues: [{ path: '', message: 'must be a CloudEvent JSON object (or use ce-* headers for binary mode)', keyword: 'type' }] };
  }
  return { ok: true, event: parsed as Record<string, unknown>, mode: 'structured' };
}

/** Source and id of a possibly invalid event, when they are usable strings. */
export function sourceAndId(event: Record<string, unknown>): { source?: string; id?: string } {
  const ref: { source?: string; id?: string } = {};
  if (typeof event.source === 'string' && event.source.length > 0) ref.source = event.source;
  if (typeof event.id === 'string' && event.id.length > 0) ref.id = event.id;
  return ref;
}

/**
 * A digest of a task request that ignores key order: the same request sent again digests the
 * same, so a re-used event id (or Idempotency-Key) with another body can be told apart from a
 * retry. Called on validated, size-bounded requests only (JSON.stringify recurses).
 */
export function requestDigest(request: unknown): string {
  const sorted = (_key: string, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]])) : v;
  return createHash('sha256').update(JSON.stringify(request, sorted)).digest('hex');
}
