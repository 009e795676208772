import { createHash } from 'node:crypto';
import type { ValidationIssue, WireError } from './schemas/common.js';
import { DEFAULT_TEAM } from './owner.js';
import {
  PAYLOAD_LIMITS,
  checkLimits,
  decodeBoundedJson,
  limitValidationIssues,
  payloadLimitError,
  type BoundedDecode,
  type LimitIssue,
  type PayloadLimits,
} from './limits.js';

/** Reads one NATS header (case-insensitively, as the server does not normalise them). */
export type HeaderLookup = (name: string) => string | undefined;

const BINARY_ATTRIBUTES = ['specversion', 'type', 'source', 'id', 'time', 'subject', 'dataschema', 'traceparent', 'tracestate'];

/**
 * The task id for a submission: a pure function of the team it was submitted for and the
 * CloudEvent's (source, id), which the CloudEvents spec makes unique. A retried publish therefore
 * names the same task even when the JetStream duplicate window has passed, a submitter can
 * compute the id before publishing, and two teams using the same source and id name two tasks:
 * no team can pre-create (or collide with) another's. The default team keeps the hash of the
 * release before teams (sha256 of source NUL id), so a submission redelivered across the upgrade
 * names its task; any other team hashes the JSON array [team, source, id], which never contains
 * the raw NUL the default form does, so the two forms never meet.
 */
export function taskIdFor(team: string, source: string, id: string): string {
  const hash = createHash('sha256');
  if (team === DEFAULT_TEAM) hash.update(source).update('\u0000').update(id);
  else hash.update(JSON.stringify([team, source, id]));
  return `t_${hash.digest('hex').slice(0, 32)}`;
}

export type DecodedEvent =
  | { ok: true; event: Record<string, unknown>; mode: 'structured' | 'binary' }
  /** `error` is set when the event is over a payload limit (code `payload_limit`, naming limit and path). */
  | { ok: false; issues: ValidationIssue[]; error?: WireError; ref?: { source?: string; id?: string } };

/** Longest `ce-*` (or content-type) header value read in binary mode; every attribute a submission needs is far shorter. */
export const CLOUDEVENT_HEADER_MAX_CHARS = 4096;

/**
 * Turns a NATS message into a structured CloudEvent object (not yet schema-validated), within
 * `limits` (by default those of a task submission) before anything else reads it.
 * Binary mode: attributes in `ce-*` headers, `data` as the body. Structured mode: the whole
 * event as JSON in the body.
 */
export function decodeCloudEvent(body: Uint8Array, header: HeaderLookup, limits: PayloadLimits = PAYLOAD_LIMITS.taskSubmission): DecodedEvent {
  if (header('ce-specversion') !== undefined) return decodeBinary(body, header, limits);
  const decoded = decodeBoundedJson(body, limits, { what: 'task submission' });
  // An event over a limit is never parsed, but its top-level source and id still name the task to reject.
  if (!decoded.ok) return { ...failed(decoded), ...(decoded.reason === 'limit' ? { ref: topLevelRef(body) } : {}) };
  const parsed = decoded.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { ok: false, issues: [{ path: '', message: 'must be a CloudEvent JSON object (or use ce-* headers for binary mode)', keyword: 'type' }] };
  }
  const event = parsed as Record<string, unknown>;
  const contentIssue = normaliseContentType(event, event.datacontenttype, '/datacontenttype');
  if (contentIssue) return { ok: false, issues: [contentIssue], ref: sourceAndId(event) };
  if ('data_base64' in event) return decodeDataBase64(event, limits);
  return { ok: true, event, mode: 'structured' };
}

/**
 * Structured mode with the data as base64 (what SDKs write for binary data, e.g. a Buffer):
 * decoded as UTF-8 JSON within the limits, then checked as one event like binary mode.
 */
function decodeDataBase64(event: Record<string, unknown>, limits: PayloadLimits): DecodedEvent {
  const encoded = event.data_base64;
  const ref = sourceAndId(event);
  if ('data' in event) return { ok: false, issues: [{ path: '/data_base64', message: 'an event carries data or data_base64, not both', keyword: 'not' }], ref };
  if (typeof encoded !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 === 1) {
    return { ok: false, issues: [{ path: '/data_base64', message: 'must be a base64 string (RFC 4648)', keyword: 'format' }], ref };
  }
  const { data_base64: _encoded, ...rest } = event;
  const decoded = decodeBoundedJson(Buffer.from(encoded, 'base64'), { ...limits, members: {} }, { what: 'task submission', basePath: '/data' });
  if (!decoded.ok) return failed(decoded, ref);
  const decodedEvent: Record<string, unknown> = { ...rest, data: decoded.value };
  const issues = checkLimits(decodedEvent, limits);
  if (issues.length > 0) return { ok: false, issues: limitValidationIssues(issues), error: payloadLimitError(issues, 'task submission'), ref };
  return { ok: true, event: decodedEvent, mode: 'structured' };
}

/**
 * Reduces a `datacontenttype` (or a binary-mode content-type) to its media type, lower-cased, as
 * RFC 9110 compares them: SDKs write `application/json; charset=utf-8`. JSON is UTF-8 (RFC 8259),
 * so another charset is refused rather than mis-read. Returns the issue, or undefined when fine.
 */
function normaliseContentType(event: Record<string, unknown>, value: unknown, path: string): ValidationIssue | undefined {
  if (typeof value !== 'string') return undefined;
  const [type, ...params] = value.split(';');
  for (const param of params) {
    const [name, raw] = param.split('=').map((s) => s.trim());
    const charset = raw?.replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name?.toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      return { path, message: `data must be UTF-8 JSON; charset ${raw ?? ''} is not supported`, keyword: 'enum' };
    }
  }
  event.datacontenttype = type!.trim().toLowerCase();
  return undefined;
}

function decodeBinary(body: Uint8Array, header: HeaderLookup, limits: PayloadLimits): DecodedEvent {
  const event: Record<string, unknown> = {};
  const tooLong: LimitIssue[] = [];
  const read = (name: string, path: string): string | undefined => {
    const v = header(name);
    if (v !== undefined && v.length > CLOUDEVENT_HEADER_MAX_CHARS) {
      tooLong.push({
        limit: 'maxStringLength',
        path,
        max: CLOUDEVENT_HEADER_MAX_CHARS,
        actual: v.length,
        message: `header ${name} is ${v.length} characters long, over the maximum of ${CLOUDEVENT_HEADER_MAX_CHARS}`,
      });
      return undefined;
    }
    return v;
  };
  for (const attr of BINARY_ATTRIBUTES) {
    const v = read(`ce-${attr}`, `/${attr}`);
    if (v !== undefined) event[attr] = v;
  }
  const contentType = read('content-type', '/datacontenttype');
  if (tooLong.length > 0) return { ok: false, issues: limitValidationIssues(tooLong), error: payloadLimitError(tooLong, 'task submission') };
  const contentIssue = normaliseContentType(event, contentType, '/datacontenttype');
  if (contentIssue) return { ok: false, issues: [contentIssue], ref: sourceAndId(event) };
  // The body is the event's `data`, one level below the event's root; members are checked on the whole event below.
  const bodyLimits = { ...limits, members: {} };
  let data: unknown;
  if (body.length > 0) {
    const decoded = decodeBoundedJson(body, bodyLimits, { what: 'task submission', basePath: '/data' });
    if (!decoded.ok) return failed(decoded);
    data = decoded.value;
  }
  event.data = data;
  // The whole event against the event's limits (members such as /data/inputs included): headers count towards its size.
  const issues = checkLimits(event, limits);
  if (issues.length > 0) return { ok: false, issues: limitValidationIssues(issues), error: payloadLimitError(issues, 'task submission') };
  return { ok: true, event, mode: 'binary' };
}

function failed(decoded: BoundedDecode & { ok: false }, ref?: { source?: string; id?: string }): DecodedEvent {
  return { ok: false, issues: decoded.issues, ...(decoded.reason === 'limit' ? { error: decoded.error } : {}), ...(ref ? { ref } : {}) };
}

/**
 * The top-level `source` and `id` strings of a structured event's JSON text, found by one scan
 * without parsing the rest (which is over a limit). Values longer than the schema allows are skipped.
 */
function topLevelRef(body: Uint8Array): { source?: string; id?: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return {};
  }
  const found: Record<string, string> = {};
  let depth = 0;
  let key: string | undefined;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (depth === 1 && expectKey) key = text.slice(i + 1, end);
      else if (depth === 1 && key !== undefined && (key === 'source' || key === 'id') && end - i < 600) {
        try {
          found[key] = JSON.parse(text.slice(i, end + 1)) as string;
        } catch {
          // not a plain string: leave it unnamed
        }
      }
      expectKey = false;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      expectKey = c === 0x7b && depth === 1;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x2c && depth === 1) {
      expectKey = true;
      key = undefined;
    }
  }
  return sourceAndId(found);
}

/** The index of the quote closing the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i;
  }
  return text.length;
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
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v;
  return createHash('sha256').update(JSON.stringify(request, sorted)).digest('hex');
}
