import type { ValidationIssue, WireError } from './schemas/common.js';
import { wireError } from './errors.js';

/**
 * Bounds on the shape of one JSON value. They are checked before anything else touches a payload:
 * code that walks a value recursively (JSON.stringify, structuredClone, ajv, a prompt renderer)
 * throws RangeError past a few thousand levels, and size multiplies cost downstream.
 */
export interface ValueLimits {
  /** UTF-8 bytes of the JSON text (of a decoded value: its compact JSON, escapes counted as one character). */
  readonly maxBytes: number;
  /** Nested arrays and objects: `{}` is depth 1, `{"a":[]}` depth 2, a scalar 0. */
  readonly maxDepth: number;
  /** UTF-16 code units of any string, object keys included. */
  readonly maxStringLength: number;
  /** Items of any one array. */
  readonly maxArrayLength: number;
  /** Keys of any one object. */
  readonly maxKeys: number;
}

/** Bounds on a whole message, with tighter ones for its free-form members. */
export interface PayloadLimits extends ValueLimits {
  /** JSON Pointer (from the message root) of a free-form member → the bounds that member must also meet. */
  readonly members?: Readonly<Record<string, ValueLimits>>;
}

/** Which bound a payload broke; `forbiddenKey` is a key refused wherever it appears. */
export type LimitName = keyof ValueLimits | 'forbiddenKey';

/** One place where a payload is over a limit. */
export interface LimitIssue {
  readonly limit: LimitName;
  /** JSON Pointer to the offending value ("" is the root), cut after MAX_POINTER_CHARS characters. */
  readonly path: string;
  /** The bound (for `forbiddenKey`: 0, no such key is allowed). */
  readonly max: number;
  /** What was found: a size, a depth, a length or count, or the refused key. */
  readonly actual: number | string;
  readonly message: string;
}

/**
 * Keys refused in every payload: merged into another object with Object.assign (or a naive deep
 * merge) they set the target's prototype, which is how prototype pollution starts.
 */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

const KiB = 1024;
const MiB = 1024 * KiB;

/** Free-form structured data a person or a model wrote: deep enough for any real document, not for a stack overflow. */
const FREE_FORM: ValueLimits = { maxBytes: 1 * MiB, maxDepth: 32, maxStringLength: 256 * KiB, maxArrayLength: 10_000, maxKeys: 1_000 };

/**
 * The default limits per kind of payload. Depths leave room for the wrapper around a free-form
 * member (a submission's `inputs` sit at depth 3 of the event, so the event may be 3 levels deeper).
 */
export const PAYLOAD_LIMITS = {
  /** A task submission (the whole CloudEvent, in either mode), with its `inputs` and `metadata`. */
  taskSubmission: {
    maxBytes: 1 * MiB,
    maxDepth: FREE_FORM.maxDepth + 3,
    maxStringLength: 256 * KiB,
    maxArrayLength: 10_000,
    maxKeys: 1_000,
    members: {
      '/data/inputs': FREE_FORM,
      // Opaque labels echoed on every event: a flat map of short strings.
      '/data/metadata': { maxBytes: 64 * KiB, maxDepth: 1, maxStringLength: 1_024, maxArrayLength: 0, maxKeys: 64 },
    },
  },
  /** The arguments of one tool call (the model's text once parsed, and what a provider receives). */
  toolArguments: FREE_FORM,
  /** What a tool returns (built-in, remote provider or MCP server) before it is shaped for the model. */
  toolResult: { maxBytes: 4 * MiB, maxDepth: 32, maxStringLength: 4 * MiB, maxArrayLength: 100_000, maxKeys: 10_000 },
  /** A memory write: messages appended to a session, working-memory entries, long-term memory jobs. */
  memoryWrite: { maxBytes: 2 * MiB, maxDepth: FREE_FORM.maxDepth + 4, maxStringLength: 1 * MiB, maxArrayLength: 10_000, maxKeys: 1_000 },
  /** Every other bus message: the NATS max_payload of the stock deployment, and depth for wrappers around free-form data. */
  envelope: { maxBytes: 8 * MiB, maxDepth: 64, maxStringLength: 8 * MiB, maxArrayLength: 100_000, maxKeys: 10_000 },
} as const satisfies Record<string, PayloadLimits>;

export type PayloadKind = keyof typeof PAYLOAD_LIMITS;

/**
 * The limits of the part of a message found at `pointer`, as limits of their own: depth less the
 * levels above it, members inside it named from it. E.g. the body of `POST /v1/tasks` is a
 * submission's `/data`, so it is bounded by `limitsAt(PAYLOAD_LIMITS.taskSubmission, '/data')`.
 */
export function limitsAt(limits: PayloadLimits, pointer: string): PayloadLimits {
  const members = Object.entries(limits.members ?? {})
    .filter(([p]) => p.startsWith(`${pointer}/`))
    .map(([p, l]) => [p.slice(pointer.length), l] as const);
  return { ...limits, maxDepth: limits.maxDepth - segmentsOf(pointer), members: Object.fromEntries(members) };
}

/** Longest JSON Pointer an issue carries; deeper paths are cut (and end in `…`) so the report stays small. */
export const MAX_POINTER_CHARS = 512;

/** Most issues one check reports: enough to act on, bounded however hostile the payload. */
export const MAX_LIMIT_ISSUES = 20;

interface Frame {
  readonly value: unknown;
  readonly parent: Frame | undefined;
  readonly key: string | number | undefined;
  readonly depth: number;
}

/**
 * Every place `value` (found at `basePath` in its message, the root by default) is over `limits`,
 * found without recursion (an explicit stack), so no input can overflow the call stack. Work is
 * bounded by the byte budget: the walk stops once the value is known to be over `maxBytes`, which
 * also ends it on a cyclic value.
 */
export function checkLimits(value: unknown, limits: PayloadLimits, basePath = ''): LimitIssue[] {
  // A value found at basePath sits that many levels down in its message, whose limits these are.
  const issues = walk(value, limits, basePath, segmentsOf(basePath));
  for (const [pointer, member] of Object.entries(limits.members ?? {})) {
    // Members are named from the message root: only those inside basePath are in this value.
    if (basePath !== '' && !pointer.startsWith(`${basePath}/`)) continue;
    const found = resolvePointer(value, pointer.slice(basePath.length));
    if (found.present) issues.push(...walk(found.value, member, pointer, 0));
  }
  return dedupe(issues);
}

function walk(root: unknown, limits: ValueLimits, basePath: string, startDepth: number): LimitIssue[] {
  const issues: LimitIssue[] = [];
  const at = (frame: Frame) => pointerOf(frame, basePath);
  let bytes = 0;
  let deepest: { frame: Frame; depth: number } | undefined;
  // Scalars are measured where they are met; only containers get a frame (and only an issue builds a path).
  const scalar = (v: unknown, parent: Frame | undefined, key: string | number | undefined, depth: number): void => {
    if (typeof v === 'string') {
      bytes += utf8Length(v) + 2;
      if (v.length > limits.maxStringLength) issues.push(stringIssue(at({ value: v, parent, key, depth }), v.length, limits.maxStringLength));
    } else if (typeof v === 'number' || typeof v === 'boolean' || v === null) {
      bytes += String(v).length;
    }
    // undefined, functions, symbols and bigints never come out of JSON.parse; JSON.stringify drops or refuses them.
  };
  const stack: Frame[] = [];
  const visit = (value: unknown, parent: Frame | undefined, key: string | number | undefined, depth: number): void => {
    if (typeof value === 'object' && value !== null) stack.push({ value, parent, key, depth });
    else scalar(value, parent, key, depth);
  };
  visit(root, undefined, undefined, startDepth);
  while (stack.length > 0 && issues.length < MAX_LIMIT_ISSUES && bytes <= limits.maxBytes) {
    const frame = stack.pop()!;
    const v = frame.value as object;
    const depth = frame.depth + 1;
    if (depth > limits.maxDepth && (deepest === undefined || depth > deepest.depth)) deepest = { frame, depth };
    if (Array.isArray(v)) {
      bytes += 2 + Math.max(0, v.length - 1);
      if (v.length > limits.maxArrayLength) issues.push(countIssue('maxArrayLength', at(frame), v.length, limits.maxArrayLength, 'items'));
      for (let i = v.length - 1; i >= 0; i--) visit(v[i], frame, i, depth);
    } else {
      const keys = Object.keys(v);
      bytes += 2 + Math.max(0, keys.length - 1);
      if (keys.length > limits.maxKeys) issues.push(countIssue('maxKeys', at(frame), keys.length, limits.maxKeys, 'keys'));
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        bytes += utf8Length(key) + 3;
        if (FORBIDDEN_KEYS.includes(key)) issues.push(forbiddenIssue(at({ value: undefined, parent: frame, key, depth }), key));
        else if (key.length > limits.maxStringLength)
          issues.push(stringIssue(at({ value: undefined, parent: frame, key, depth }), key.length, limits.maxStringLength, 'key'));
        visit((v as Record<string, unknown>)[key], frame, key, depth);
      }
    }
  }
  if (bytes > limits.maxBytes) issues.push(bytesIssue(basePath, bytes, limits.maxBytes, true));
  // One depth issue, at the first container past the bound on the deepest branch, naming the depth reached.
  if (deepest) issues.push(depthIssue(pointerOf(ancestorAt(deepest.frame, limits.maxDepth + 1), basePath), deepest.depth, limits.maxDepth));
  return issues;
}

/** The frame on `frame`'s branch whose container is at `depth` (frames know their parent's depth). */
function ancestorAt(frame: Frame, depth: number): Frame {
  let f = frame;
  while (f.depth + 1 > depth && f.parent) f = f.parent;
  return f;
}

export type BoundedDecode =
  | { ok: true; value: unknown }
  /** `limits`: what was over which limit (reason `limit`; empty otherwise); `issues`: the same as validation issues. */
  | { ok: false; reason: 'limit' | 'utf8' | 'json'; message: string; issues: ValidationIssue[]; limits: LimitIssue[]; error: WireError };

// fatal: bad UTF-8 is refused rather than silently turned into U+FFFD (which would change the data).
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes JSON bytes within `limits`: the size is checked before anything is parsed, invalid UTF-8
 * is refused, nesting is measured on the raw text (without recursion) before JSON.parse runs, and
 * the parsed value is then checked against the other limits. Never throws.
 */
export function decodeBoundedJson(bytes: Uint8Array, limits: PayloadLimits, opts: DecodeOptions = {}): BoundedDecode {
  const what = opts.what ?? 'payload';
  if (bytes.length > limits.maxBytes) return overLimit([bytesIssue(opts.basePath ?? '', bytes.length, limits.maxBytes)], what);
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    const message = `${what} is not valid UTF-8`;
    return { ok: false, reason: 'utf8', message, issues: [{ path: '', message, keyword: 'utf8' }], limits: [], error: wireError('invalid_payload', message) };
  }
  return parseWithin(text, limits, what, opts.basePath ?? '');
}

/** How a bounded decode names what it decodes, in messages and paths. */
export interface DecodeOptions {
  /** Names the payload in messages, e.g. "task submission" (default "payload"). */
  readonly what?: string;
  /** JSON Pointer of the decoded text inside the message it belongs to (e.g. `/data` for a binary-mode CloudEvent body). */
  readonly basePath?: string;
}

/** `decodeBoundedJson` for JSON that is already text (an HTTP body, the argument text a model wrote). */
export function parseBoundedJson(text: string, limits: PayloadLimits, opts: DecodeOptions = {}): BoundedDecode {
  const what = opts.what ?? 'payload';
  const basePath = opts.basePath ?? '';
  const size = utf8Length(text);
  if (size > limits.maxBytes) return overLimit([bytesIssue(basePath, size, limits.maxBytes)], what);
  return parseWithin(text, limits, what, basePath);
}

function parseWithin(text: string, limits: PayloadLimits, what: string, basePath: string): BoundedDecode {
  const offset = segmentsOf(basePath);
  const scanned = scanDepth(text, limits.maxDepth - offset);
  if (scanned.firstPath !== undefined)
    return overLimit([depthIssue(cutPointer(basePath + scanned.firstPath), scanned.deepest + offset, limits.maxDepth)], what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = `${what} is not valid JSON: ${(err as Error).message}`;
    return { ok: false, reason: 'json', message, issues: [{ path: '', message, keyword: 'json' }], limits: [], error: wireError('invalid_payload', message) };
  }
  if (cannotBreakLimits(text, limits, scanned.deepest)) return { ok: true, value };
  const issues = checkLimits(value, limits, basePath);
  return issues.length > 0 ? overLimit(issues, what) : { ok: true, value };
}

/**
 * Whether the text is too small to break any limit but depth (already measured) and free of any
 * spelling of a refused key: then the walk over the parsed value can be skipped, which is what
 * most bus messages get. A string, an array or an object of n units, items or keys takes at least
 * n characters of JSON text; a refused key needs its name in the text or a \u escape.
 */
function cannotBreakLimits(text: string, limits: PayloadLimits, deepest: number): boolean {
  // Members have bounds of their own (bytes among them): those payloads are always walked.
  if (Object.keys(limits.members ?? {}).length > 0) return false;
  if (text.length > Math.min(limits.maxStringLength, limits.maxArrayLength, limits.maxKeys) || deepest > limits.maxDepth) return false;
  return !text.includes('\\u') && !FORBIDDEN_KEYS.some((k) => text.includes(k));
}

/** A value known to be within `limits`, or the structured `payload_limit` error saying where it is not. */
export function limitsError(value: unknown, limits: PayloadLimits, opts: DecodeOptions = {}): WireError | undefined {
  const what = opts.what ?? 'payload';
  const issues = checkLimits(value, limits, opts.basePath);
  return issues.length > 0 ? payloadLimitError(issues, what) : undefined;
}

/**
 * The wire error for a payload over its limits: `details` names the first limit broken (limit,
 * path, max, actual) and lists every issue found.
 */
export function payloadLimitError(issues: readonly LimitIssue[], what = 'payload'): WireError {
  const first = issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return wireError('payload_limit', `${what} is over a payload limit: ${first.path || '(root)'} ${first.message}${more}`, {
    limit: first.limit,
    path: first.path,
    max: first.max,
    actual: first.actual,
    issues: issues.map((i) => ({ ...i })),
  });
}

/** Limit issues in the shape every validation report uses (`keyword` is the limit's name). */
export function limitValidationIssues(issues: readonly LimitIssue[]): ValidationIssue[] {
  return issues.map((i) => ({ path: i.path, message: i.message, keyword: i.limit }));
}

function overLimit(issues: LimitIssue[], what: string): BoundedDecode {
  const error = payloadLimitError(issues, what);
  return { ok: false, reason: 'limit', message: error.message, issues: limitValidationIssues(issues), limits: issues, error };
}

/**
 * How deep JSON text goes and, when deeper than `maxDepth`, the JSON Pointer of the first container past it: one pass, no recursion, no parsing. Brackets inside strings do not
 * count. Malformed text is measured as far as it goes; JSON.parse refuses it afterwards.
 */
function scanDepth(text: string, maxDepth: number): { deepest: number; firstPath?: string } {
  // Per open container up to maxDepth: whether it is an object, its current key's text span, its current index.
  const isObject: boolean[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  const index: number[] = [];
  let depth = 0;
  let deepest = 0;
  let firstPath: string | undefined;
  let inString = false;
  let stringIsKey = false;
  let stringStart = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        inString = false;
        if (stringIsKey && depth <= maxDepth) {
          keyStart[depth - 1] = stringStart;
          keyEnd[depth - 1] = i + 1;
        }
      }
      continue;
    }
    switch (c) {
      case 0x22: // "
        inString = true;
        stringStart = i;
        stringIsKey = expectKey;
        expectKey = false;
        break;
      case 0x7b: // {
      case 0x5b: // [
        depth++;
        if (depth > deepest) deepest = depth;
        if (depth > maxDepth) {
          firstPath ??= scannedPointer(text, isObject, keyStart, keyEnd, index, maxDepth);
        } else {
          isObject[depth - 1] = c === 0x7b;
          keyStart[depth - 1] = -1;
          index[depth - 1] = 0;
        }
        expectKey = c === 0x7b;
        break;
      case 0x7d: // }
      case 0x5d: // ]
        if (depth > 0) depth--;
        expectKey = false;
        break;
      case 0x2c: // ,
        if (depth > 0 && depth <= maxDepth) {
          if (isObject[depth - 1]) expectKey = true;
          else index[depth - 1]!++;
        }
        break;
      default:
        break;
    }
  }
  return firstPath === undefined ? { deepest } : { deepest, firstPath };
}

/** The pointer of the container opened at depth maxDepth + 1: the keys and indexes of the levels around it. */
function scannedPointer(text: string, isObject: boolean[], keyStart: number[], keyEnd: number[], index: number[], maxDepth: number): string {
  let path = '';
  for (let level = 0; level < maxDepth && path.length <= MAX_POINTER_CHARS; level++) {
    if (!isObject[level]) {
      path += `/${index[level]}`;
      continue;
    }
    const start = keyStart[level]!;
    let key = '?';
    if (start >= 0) {
      try {
        // Only as much of a long key as the pointer can show.
        const raw = text.slice(start, Math.min(keyEnd[level]!, start + MAX_POINTER_CHARS));
        key = raw.endsWith('"') && raw.length > 1 ? (JSON.parse(raw) as string) : raw.slice(1);
      } catch {
        key = text.slice(start + 1, Math.min(keyEnd[level]! - 1, start + 1 + MAX_POINTER_CHARS));
      }
    }
    path += `/${escapePointer(key)}`;
  }
  return cutPointer(path);
}

function pointerOf(frame: Frame, basePath: string): string {
  const parts: string[] = [];
  for (let f: Frame | undefined = frame; f && f.key !== undefined; f = f.parent) {
    parts.push(typeof f.key === 'number' ? String(f.key) : escapePointer(f.key.slice(0, MAX_POINTER_CHARS)));
  }
  // Built root-first; past the cut only the outer segments are kept anyway.
  let path = basePath;
  for (let i = parts.length - 1; i >= 0 && path.length <= MAX_POINTER_CHARS; i--) path += `/${parts[i]}`;
  return cutPointer(path);
}

function resolvePointer(value: unknown, pointer: string): { present: true; value: unknown } | { present: false } {
  let current = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return { present: false };
    current = (current as Record<string, unknown>)[key];
  }
  return { present: true, value: current };
}

const segmentsOf = (pointer: string) => (pointer === '' ? 0 : pointer.split('/').length - 1);

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

const cutPointer = (path: string) => (path.length > MAX_POINTER_CHARS ? `${path.slice(0, MAX_POINTER_CHARS)}…` : path);

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

function dedupe(issues: LimitIssue[]): LimitIssue[] {
  const seen = new Set<string>();
  return issues
    .filter((i) => {
      const key = `${i.limit}\u0000${i.path}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, MAX_LIMIT_ISSUES);
}

function bytesIssue(path: string, actual: number, max: number, atLeast = false): LimitIssue {
  return { limit: 'maxBytes', path, max, actual, message: `is ${atLeast ? 'more than ' : ''}${actual} bytes of JSON, over the maximum of ${max}` };
}

function depthIssue(path: string, actual: number, max: number): LimitIssue {
  return { limit: 'maxDepth', path, max, actual, message: `nests ${actual} levels deep, over the maximum of ${max}` };
}

function stringIssue(path: string, actual: number, max: number, what = 'string'): LimitIssue {
  return { limit: 'maxStringLength', path, max, actual, message: `${what} is ${actual} characters long, over the maximum of ${max}` };
}

function countIssue(limit: 'maxArrayLength' | 'maxKeys', path: string, actual: number, max: number, noun: string): LimitIssue {
  return { limit, path, max, actual, message: `has ${actual} ${noun}, over the maximum of ${max}` };
}

function forbiddenIssue(path: string, key: string): LimitIssue {
  return { limit: 'forbiddenKey', path, max: 0, actual: key, message: `uses the key "${key}", which is refused (prototype pollution)` };
}
