import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  MAX_LIMIT_ISSUES,
  MAX_POINTER_CHARS,
  PAYLOAD_LIMITS,
  checkLimits,
  limitsAt,
  decodeBoundedJson,
  decodeCloudEvent,
  parseBoundedJson,
  type HeaderLookup,
  type PayloadLimits,
} from '../src/index.js';

const small: PayloadLimits = { maxBytes: 1000, maxDepth: 4, maxStringLength: 10, maxArrayLength: 5, maxKeys: 3 };
const bytes = (text: string) => new TextEncoder().encode(text);
const noHeaders: HeaderLookup = () => undefined;

/** `depth` nested objects `{"a":{"a":...}}` as JSON text, built without recursion. */
function deepObjectText(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}
/** `depth` nested arrays as a value, built without recursion (the tests must not overflow either). */
function deepArrayValue(depth: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
}

function submission(data: Record<string, unknown>): Record<string, unknown> {
  return { specversion: '1.0', type: 'io.hermes.task.submit', source: 'urn:test', id: 'evt-1', data: { user_id: 'u1', goal: 'g', ...data } };
}

describe('checkLimits', () => {
  it('accepts values exactly at every limit', () => {
    const atLimit = { a: [[['0123456789', 1, 2, 3, 4]]], b: true, c: null };
    expect(checkLimits(atLimit, small)).toEqual([]);
  });

  it('names the limit, the path, the maximum and the actual value', () => {
    expect(checkLimits({ a: { s: '01234567890' } }, small)).toEqual([expect.objectContaining({ limit: 'maxStringLength', path: '/a/s', max: 10, actual: 11 })]);
    expect(checkLimits({ a: [1, 2, 3, 4, 5, 6] }, small)).toEqual([expect.objectContaining({ limit: 'maxArrayLength', path: '/a', max: 5, actual: 6 })]);
    expect(checkLimits({ a: 1, b: 2, c: 3, d: 4 }, small)).toEqual([expect.objectContaining({ limit: 'maxKeys', path: '', max: 3, actual: 4 })]);
    expect(checkLimits({ 'x/y~z': { a: { b: { c: {} } } } }, small)).toEqual([
      expect.objectContaining({ limit: 'maxDepth', path: '/x~1y~0z/a/b/c', max: 4, actual: 5 }),
    ]);
  });

  it('refuses prototype-pollution keys wherever they appear', () => {
    const polluted = JSON.parse('{"a":[{"__proto__":{"admin":true}}],"constructor":1,"b":{"prototype":2}}') as unknown;
    const issues = checkLimits(polluted, { ...small, maxKeys: 10 });
    expect(issues.map((i) => [i.limit, i.path, i.actual]).sort()).toEqual([
      ['forbiddenKey', '/a/0/__proto__', '__proto__'],
      ['forbiddenKey', '/b/prototype', 'prototype'],
      ['forbiddenKey', '/constructor', 'constructor'],
    ]);
  });

  it('measures 100,000 levels of nesting without a RangeError and reports the depth reached', () => {
    const issues = checkLimits(deepArrayValue(100_000), PAYLOAD_LIMITS.envelope);
    expect(issues).toEqual([expect.objectContaining({ limit: 'maxDepth', max: 64, actual: 100_000 })]);
    expect(issues[0]!.path).toBe('/0'.repeat(64));
  });

  it('stops at the byte budget, so a cyclic value ends the walk', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const issues = checkLimits(cyclic, { ...small, maxDepth: 1_000_000 });
    expect(issues).toEqual([expect.objectContaining({ limit: 'maxBytes', max: 1000 })]);
  });

  it('checks free-form members against their own, tighter limits', () => {
    const issues = checkLimits(submission({ inputs: { x: deepArrayValue(32) } }), PAYLOAD_LIMITS.taskSubmission);
    expect(issues).toEqual([expect.objectContaining({ limit: 'maxDepth', path: `/data/inputs/x${'/0'.repeat(31)}`, max: 32, actual: 33 })]);
    expect(checkLimits(submission({ inputs: { x: deepArrayValue(31) } }), PAYLOAD_LIMITS.taskSubmission)).toEqual([]);
    const metadata = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    expect(checkLimits(submission({ metadata }), PAYLOAD_LIMITS.taskSubmission)).toEqual([
      expect.objectContaining({ limit: 'maxKeys', path: '/data/metadata', max: 64, actual: 65 }),
    ]);
  });

  it('reports at most MAX_LIMIT_ISSUES issues however many there are', () => {
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 'x'.repeat(20)]));
    expect(checkLimits(wide, { ...small, maxKeys: 1000, maxBytes: 1e6 })).toHaveLength(MAX_LIMIT_ISSUES);
  });
});

describe('decodeBoundedJson', () => {
  it('decodes a value within its limits', () => {
    expect(decodeBoundedJson(bytes('{"a":[1,"x"]}'), small)).toEqual({ ok: true, value: { a: [1, 'x'] } });
  });

  it('refuses over-size bytes before parsing them', () => {
    const decoded = decodeBoundedJson(bytes(`"${'x'.repeat(2000)}`), small);
    expect(decoded).toMatchObject({
      ok: false,
      reason: 'limit',
      error: { code: 'payload_limit', retryable: false, details: { limit: 'maxBytes', path: '', max: 1000, actual: 2001 } },
    });
  });

  it('accepts exactly maxBytes bytes', () => {
    const text = `"${'x'.repeat(998)}"`;
    expect(decodeBoundedJson(bytes(text), { ...small, maxStringLength: 1000 }).ok).toBe(true);
  });

  it('refuses invalid UTF-8 instead of replacing it', () => {
    for (const bad of [
      [0x22, 0xff, 0x22],
      [0x22, 0xc3, 0x22],
      [0x22, 0xed, 0xa0, 0x80, 0x22],
    ]) {
      expect(decodeBoundedJson(Uint8Array.from(bad), small)).toMatchObject({ ok: false, reason: 'utf8', issues: [{ keyword: 'utf8' }] });
    }
  });

  it.each([5_000, 100_000])('measures %i levels of nesting on the raw text, before JSON.parse', (depth) => {
    const decoded = decodeBoundedJson(bytes(deepObjectText(depth)), PAYLOAD_LIMITS.taskSubmission);
    expect(decoded).toMatchObject({ ok: false, reason: 'limit', error: { details: { limit: 'maxDepth', max: 35, actual: depth, path: '/a'.repeat(35) } } });
  });

  it('does not count brackets inside strings', () => {
    const text = JSON.stringify({ s: '[[[[[[{{{{{{' + '\\"[[[[' });
    expect(decodeBoundedJson(bytes(text), { ...small, maxStringLength: 100 }).ok).toBe(true);
  });

  it('names the path of a deep array inside an object by keys and indexes', () => {
    const decoded = decodeBoundedJson(bytes('{"x":1,"list":[0,{"k":[[[]]]}]}'), small);
    expect(decoded).toMatchObject({ ok: false, error: { details: { limit: 'maxDepth', path: '/list/1/k/0', actual: 6 } } });
  });

  it('refuses a huge string and a wide array or object after parsing', () => {
    const limits = PAYLOAD_LIMITS.toolArguments;
    expect(parseBoundedJson(JSON.stringify({ s: 'x'.repeat(limits.maxStringLength + 1) }), limits)).toMatchObject({
      ok: false,
      error: { details: { limit: 'maxStringLength', path: '/s' } },
    });
    expect(parseBoundedJson(JSON.stringify({ a: new Array(limits.maxArrayLength + 1).fill(0) }), limits)).toMatchObject({
      ok: false,
      error: { details: { limit: 'maxArrayLength', path: '/a' } },
    });
    const wide = Object.fromEntries(Array.from({ length: limits.maxKeys + 1 }, (_, i) => [`k${i}`, 0]));
    expect(parseBoundedJson(JSON.stringify(wide), limits)).toMatchObject({
      ok: false,
      error: { details: { limit: 'maxKeys', path: '', actual: limits.maxKeys + 1 } },
    });
  });

  it('reports text that is not JSON as invalid_payload', () => {
    expect(parseBoundedJson('{"a":', small)).toMatchObject({ ok: false, reason: 'json', error: { code: 'invalid_payload' } });
  });

  it('cuts very long paths', () => {
    const key = 'k'.repeat(400);
    const decoded = parseBoundedJson(JSON.stringify({ [key]: { [key]: 'x'.repeat(20) } }), { ...small, maxStringLength: 500 });
    expect(decoded.ok).toBe(true);
    const over = checkLimits({ [key]: { [key]: 'x'.repeat(600) } }, { ...small, maxStringLength: 500 });
    expect(over[0]!.path.length).toBeLessThanOrEqual(MAX_POINTER_CHARS + 1);
    expect(over[0]!.path.endsWith('…')).toBe(true);
  });

  it('is a non-retryable error code', () => {
    expect(ERROR_CODES.payload_limit.retryable).toBe(false);
  });
});

describe('decodeCloudEvent within the submission limits', () => {
  const binary = (headers: Record<string, string>): HeaderLookup => {
    const lower = new Map(Object.entries({ 'ce-specversion': '1.0', ...headers }).map(([k, v]) => [k.toLowerCase(), v]));
    return (name) => lower.get(name.toLowerCase());
  };

  it('rejects 5,000 levels of inputs in structured mode, naming limit and path', () => {
    const text = `{"specversion":"1.0","type":"io.hermes.task.submit","source":"s","id":"i","data":{"user_id":"u","goal":"g","inputs":${deepObjectText(5000)}}}`;
    const decoded = decodeCloudEvent(bytes(text), noHeaders);
    // The raw text is measured against the event's depth (inputs sit at depth 3): 5,002 levels in all.
    expect(decoded).toMatchObject({
      ok: false,
      error: { code: 'payload_limit', details: { limit: 'maxDepth', max: 35, actual: 5002, path: `/data/inputs${'/a'.repeat(33)}` } },
    });
    if (!decoded.ok) expect(decoded.issues[0]).toMatchObject({ keyword: 'maxDepth' });
  });

  it('rejects 5,000 levels of inputs in binary mode, with the path inside the event', () => {
    const decoded = decodeCloudEvent(bytes(`{"user_id":"u","goal":"g","inputs":${deepObjectText(5000)}}`), binary({}));
    expect(decoded).toMatchObject({ ok: false, error: { details: { limit: 'maxDepth', max: 35, actual: 5002, path: `/data/inputs${'/a'.repeat(33)}` } } });
  });

  it('rejects inputs one level too deep for the inputs limit in binary mode', () => {
    const decoded = decodeCloudEvent(bytes(JSON.stringify({ user_id: 'u', goal: 'g', inputs: { x: deepArrayValue(32) } })), binary({}));
    expect(decoded).toMatchObject({ ok: false, error: { details: { limit: 'maxDepth', path: `/data/inputs/x${'/0'.repeat(31)}`, max: 32, actual: 33 } } });
  });

  it('rejects an over-long ce-* header value', () => {
    const decoded = decodeCloudEvent(bytes('{"user_id":"u","goal":"g"}'), binary({ 'ce-source': 's'.repeat(5000) }));
    expect(decoded).toMatchObject({ ok: false, error: { details: { limit: 'maxStringLength', path: '/source', actual: 5000 } } });
  });

  it('rejects a prototype-pollution key in inputs', () => {
    const decoded = decodeCloudEvent(bytes(JSON.stringify(submission({})).replace('"goal":"g"', '"goal":"g","inputs":{"__proto__":{"x":1}}')), noHeaders);
    expect(decoded).toMatchObject({ ok: false, error: { details: { limit: 'forbiddenKey', path: '/data/inputs/__proto__' } } });
  });

  it('refuses invalid UTF-8 in either mode', () => {
    const body = Uint8Array.from([...bytes('{"user_id":"u","goal":"'), 0xc0, 0xaf, ...bytes('"}')]);
    expect(decodeCloudEvent(body, binary({}))).toMatchObject({ ok: false, issues: [{ keyword: 'utf8' }] });
    expect(decodeCloudEvent(body, noHeaders)).toMatchObject({ ok: false, issues: [{ keyword: 'utf8' }] });
  });

  it('accepts a submission at the inputs depth limit', () => {
    const decoded = decodeCloudEvent(bytes(JSON.stringify(submission({ inputs: { x: deepArrayValue(31) } }))), noHeaders);
    expect(decoded.ok).toBe(true);
  });
});

describe('decodeCloudEvent names the task of an event over a limit', () => {
  it('finds the top-level source and id without parsing the rest', () => {
    const text = `{"specversion":"1.0","data":{"user_id":"u","goal":"g","inputs":${'{"id":'.repeat(5000)}1${'}'.repeat(5000)}},"source":"urn:team","id":"evt-\\"7\\""}`;
    expect(decodeCloudEvent(bytes(text), noHeaders)).toMatchObject({ ok: false, ref: { source: 'urn:team', id: 'evt-"7"' }, error: { code: 'payload_limit' } });
  });
});

describe('checkLimits of a part of a message', () => {
  it('applies the message limits to a value found at basePath, members included', () => {
    const data = { user_id: 'u', goal: 'g', inputs: { x: deepArrayValue(32) } };
    expect(checkLimits(data, PAYLOAD_LIMITS.taskSubmission, '/data')).toEqual([
      expect.objectContaining({ limit: 'maxDepth', path: `/data/inputs/x${'/0'.repeat(31)}`, max: 32, actual: 33 }),
    ]);
  });
});

describe('limitsAt', () => {
  it('bounds a part of a message as the whole message would', () => {
    const body = limitsAt(PAYLOAD_LIMITS.taskSubmission, '/data');
    expect(body.maxDepth).toBe(PAYLOAD_LIMITS.taskSubmission.maxDepth - 1);
    expect(Object.keys(body.members ?? {})).toEqual(['/inputs', '/metadata']);
    expect(checkLimits({ user_id: 'u', goal: 'g', inputs: { x: deepArrayValue(32) } }, body)).toEqual([
      expect.objectContaining({ limit: 'maxDepth', path: `/inputs/x${'/0'.repeat(31)}`, max: 32, actual: 33 }),
    ]);
  });
});

describe('decodeBoundedJson on small payloads', () => {
  it('still finds a refused key, spelled plainly or escaped, where the walk is otherwise skipped', () => {
    const limits = PAYLOAD_LIMITS.envelope;
    expect(decodeBoundedJson(bytes('{"a":{"\\u005f_proto__":1}}'), limits)).toMatchObject({
      ok: false,
      error: { details: { limit: 'forbiddenKey', path: '/a/__proto__' } },
    });
    expect(decodeBoundedJson(bytes('{"constructor":1}'), limits)).toMatchObject({ ok: false, error: { details: { limit: 'forbiddenKey' } } });
    expect(decodeBoundedJson(bytes('{"a":[1,2,{"b":"c"}]}'), limits)).toEqual({ ok: true, value: { a: [1, 2, { b: 'c' }] } });
    expect(decodeBoundedJson(bytes('{"a":[1,2,3]}'), { ...limits, maxArrayLength: 2 })).toMatchObject({
      ok: false,
      error: { details: { limit: 'maxArrayLength', path: '/a' } },
    });
  });
});
