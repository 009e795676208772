import fc from 'fast-check';
import { DEFAULT_TEAM, TASK_SUBMIT_TYPE, taskIdFor } from '@hermes/contracts';

/** One message a buggy or hostile publisher could put on the submit subject, and where its rejection must appear. */
export interface HostileSubmission {
  /** What kind of hostility, for the report and for failures. */
  readonly kind: string;
  readonly body: Uint8Array;
  readonly headers: Record<string, string>;
  /** The task its rejection names, when the message names one (source and id readable); else the catch-all subject. */
  readonly taskId?: string;
  /** The error code the rejection must carry. */
  readonly code: 'payload_limit' | 'invalid_task_event';
  /** For payload_limit: the limit it must name. */
  readonly limit?: string;
}

const encoder = new TextEncoder();
const SOURCE = 'urn:fuzz';
let ids = 0;
/** A fresh CloudEvent id per message: a reused one would be a resend of the same (rejected) task. */
const nextId = () => `fz-${process.pid}-${++ids}`;

const depth = fc.oneof(fc.integer({ min: 33, max: 300 }), fc.integer({ min: 300, max: 100_000 }));
const structure = fc.constantFrom('array', 'object', 'mixed');

/** `n` levels of nesting as JSON text, built without recursion. */
function nested(n: number, kind: string): string {
  if (kind === 'array') return '['.repeat(n) + ']'.repeat(n);
  if (kind === 'object') return '{"k":'.repeat(n - 1) + '{}' + '}'.repeat(n - 1);
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < n; i++) {
    open.push(i % 2 ? '[' : '{"m":');
    close.push(i % 2 ? ']' : '}');
  }
  return open.join('') + '1' + close.reverse().join('');
}

function structured(dataText: string, id = nextId(), extra = ''): { text: string; taskId: string } {
  return {
    text: `{"specversion":"1.0","type":"${TASK_SUBMIT_TYPE}","source":"${SOURCE}","id":"${id}"${extra},"data":${dataText}}`,
    taskId: taskIdFor(DEFAULT_TEAM, SOURCE, id),
  };
}

const limitCase = (kind: string, limit: string, dataText: string): HostileSubmission => {
  const { text, taskId } = structured(dataText);
  return { kind, body: encoder.encode(text), headers: {}, taskId, code: 'payload_limit', limit };
};

/** Deep nesting in inputs, structured mode: measured before parsing, the task still named. */
const deepInputs = fc
  .tuple(depth, structure)
  .map(([n, kind]) => limitCase(`deep ${kind} ${n}`, 'maxDepth', `{"user_id":"u_fuzz","goal":"g","inputs":{"x":${nested(n, kind)}}}`));

/** The same in binary mode: the body is the data, the task named by the headers. */
const deepBinary = fc.tuple(depth, structure).map(([n, kind]): HostileSubmission => {
  const id = nextId();
  return {
    kind: `binary deep ${kind} ${n}`,
    body: encoder.encode(`{"user_id":"u_fuzz","goal":"g","inputs":${nested(n, kind)}}`),
    headers: { 'ce-specversion': '1.0', 'ce-type': TASK_SUBMIT_TYPE, 'ce-source': SOURCE, 'ce-id': id, 'content-type': 'application/json' },
    taskId: taskIdFor(DEFAULT_TEAM, SOURCE, id),
    code: 'payload_limit',
    limit: 'maxDepth',
  };
});

const wideArray = fc
  .integer({ min: 10_001, max: 60_000 })
  .map((n) => limitCase(`wide array ${n}`, 'maxArrayLength', `{"user_id":"u_fuzz","goal":"g","inputs":{"list":[${'0,'.repeat(n - 1)}0]}}`));

const wideObject = fc
  .integer({ min: 1_001, max: 5_000 })
  .map((n) =>
    limitCase(`wide object ${n}`, 'maxKeys', `{"user_id":"u_fuzz","goal":"g","inputs":{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}}`),
  );

const hugeString = fc
  .integer({ min: 256 * 1024 + 1, max: 600 * 1024 })
  .map((n) => limitCase(`huge string ${n}`, 'maxStringLength', `{"user_id":"u_fuzz","goal":"g","inputs":{"doc":"${'x'.repeat(n)}"}}`));

const manyMetadata = fc
  .integer({ min: 65, max: 500 })
  .map((n) =>
    limitCase(`metadata keys ${n}`, 'maxKeys', `{"user_id":"u_fuzz","goal":"g","metadata":{${Array.from({ length: n }, (_, i) => `"m${i}":"v"`).join(',')}}}`),
  );

/** __proto__, constructor and prototype anywhere in inputs (JSON.parse keeps them as own keys). */
const pollution = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.integer({ min: 0, max: 20 }), fc.jsonValue({ maxDepth: 2 }))
  .map(([key, at, value]) => {
    const inner = `{"${key}":${JSON.stringify(value)}}`;
    return limitCase(`pollution ${key} at ${at}`, 'forbiddenKey', `{"user_id":"u_fuzz","goal":"g","inputs":${'{"n":'.repeat(at)}${inner}${'}'.repeat(at)}}`);
  });

/** Invalid UTF-8 bytes inside a string of an otherwise valid event: refused, never turned into U+FFFD. */
const badBytes = fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xf4, 0x90, 0x80, 0x80]);
const badUtf8Structured = badBytes.map((bytes): HostileSubmission => {
  const { text } = structured('{"user_id":"u_fuzz","goal":"@@"}');
  const [before, after] = text.split('@@') as [string, string];
  // Not JSON-readable as a whole, so no task can be named: the catch-all subject.
  return {
    kind: `bad utf-8 ${bytes.join(',')}`,
    body: Uint8Array.from([...encoder.encode(before), ...bytes, ...encoder.encode(after)]),
    headers: {},
    code: 'invalid_task_event',
  };
});
const badUtf8Binary = badBytes.map((bytes): HostileSubmission => {
  const id = nextId();
  return {
    kind: `binary bad utf-8 ${bytes.join(',')}`,
    body: Uint8Array.from([...encoder.encode('{"user_id":"u_fuzz","goal":"'), ...bytes, ...encoder.encode('"}')]),
    headers: { 'ce-specversion': '1.0', 'ce-type': TASK_SUBMIT_TYPE, 'ce-source': SOURCE, 'ce-id': id },
    taskId: taskIdFor(DEFAULT_TEAM, SOURCE, id),
    code: 'invalid_task_event',
  };
});

/** Members of the request replaced by values of a type they may not have, or a required one dropped. */
const scalar = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null));
const list = fc.array(fc.integer(), { maxLength: 3 });
const dict = fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { minKeys: 1, maxKeys: 3 });
const WRONG: Record<string, fc.Arbitrary<unknown>> = {
  user_id: fc.oneof(scalar, fc.boolean(), list, dict),
  goal: fc.oneof(scalar, fc.boolean(), list, dict, fc.constant('')),
  priority: fc.oneof(scalar, fc.constant('urgent'), list),
  inputs: fc.oneof(scalar, fc.boolean(), list, fc.string({ maxLength: 5 })),
  tools: fc.oneof(scalar, fc.boolean(), dict, fc.constant([''])),
  stream: fc.oneof(scalar, list, dict, fc.string({ maxLength: 5 })),
  budget: fc.oneof(scalar, fc.boolean(), list, fc.constant({ max_steps: 0 })),
  // An array here breaks the metadata limits (depth 1, no arrays) before the schema: a payload_limit case, not this one.
  metadata: fc.oneof(scalar, fc.boolean(), fc.constant({ label: 7 })),
};
const wrongTypes = fc
  .constantFrom(...Object.keys(WRONG))
  .chain((field) => fc.tuple(fc.constant(field), WRONG[field]!, fc.boolean()))
  .map(([field, value, drop]): HostileSubmission => {
    const data: Record<string, unknown> = { user_id: 'u_fuzz', goal: 'g', [field]: value };
    if (drop) delete data[field === 'goal' ? 'user_id' : 'goal'];
    const { text, taskId } = structured(JSON.stringify(data));
    return {
      kind: `wrong type ${field}=${JSON.stringify(value)}${drop ? ' (a required member dropped)' : ''}`,
      body: encoder.encode(text),
      headers: {},
      taskId,
      code: 'invalid_task_event',
    };
  });

/** Bodies that are JSON but not a CloudEvent object, or not JSON at all. */
const notAnEvent = fc
  .oneof(
    fc
      .jsonValue({ maxDepth: 3 })
      .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
      .map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 40 }).filter((s) => {
      try {
        JSON.parse(s);
        return false;
      } catch {
        return true;
      }
    }),
  )
  .map((text): HostileSubmission => ({ kind: `not an event ${text.slice(0, 30)}`, body: encoder.encode(text), headers: {}, code: 'invalid_task_event' }));

/** Binary-mode header edge cases: wrong or empty attributes, over-long values, odd content types, empty or non-JSON bodies. */
const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 20 });
const binaryHeaders = fc
  .record({
    specversion: fc.constantFrom('1.0', '2.0', '0.3', 'x'),
    type: fc.oneof(fc.constant(TASK_SUBMIT_TYPE), printable),
    sourceLength: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 4_097, max: 9_000 })),
    contentType: fc.option(fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', 'application/xml', 'x'), { nil: undefined }),
    body: fc.constantFrom('', '{}', 'goal: x', '[]', '{"user_id":"u_fuzz"}', '{"user_id":"u_fuzz","goal":"g"}'),
    time: fc.option(printable, { nil: undefined }),
  })
  // Valid except perhaps for content type or time: make sure something is wrong.
  .filter(
    (h) =>
      !(
        h.specversion === '1.0' &&
        h.type === TASK_SUBMIT_TYPE &&
        h.sourceLength > 0 &&
        h.sourceLength <= 30 &&
        h.body === '{"user_id":"u_fuzz","goal":"g"}' &&
        (h.contentType === undefined || h.contentType.startsWith('application/json')) &&
        h.time === undefined
      ),
  )
  .map((h): HostileSubmission => {
    const id = nextId();
    const source = 's'.repeat(h.sourceLength);
    const headers: Record<string, string> = { 'ce-specversion': h.specversion, 'ce-type': h.type, 'ce-id': id };
    if (h.sourceLength > 0) headers['ce-source'] = source;
    if (h.contentType !== undefined) headers['content-type'] = h.contentType;
    if (h.time !== undefined) headers['ce-time'] = h.time;
    const tooLong = h.sourceLength > 4_096;
    return {
      kind: `binary headers ${JSON.stringify({ ...h, sourceLength: h.sourceLength })}`,
      body: encoder.encode(h.body),
      headers,
      // An over-long ce-source still names the task (the rejection must reach whoever waits on it).
      ...(h.sourceLength > 0 ? { taskId: taskIdFor(DEFAULT_TEAM, source, id) } : {}),
      code: tooLong ? 'payload_limit' : 'invalid_task_event',
      ...(tooLong ? { limit: 'maxStringLength' } : {}),
    };
  });

/** How many of each kind one run publishes: thousands in all, the large ones (100 KB-600 KB each) fewer. */
export const HOSTILE_MIX: readonly [string, fc.Arbitrary<HostileSubmission>, number][] = [
  ['deep inputs', deepInputs, 150],
  ['deep binary', deepBinary, 100],
  ['wide arrays', wideArray, 60],
  ['wide objects', wideObject, 60],
  ['huge strings', hugeString, 20],
  ['metadata keys', manyMetadata, 100],
  ['prototype pollution', pollution, 400],
  ['bad utf-8 structured', badUtf8Structured, 300],
  ['bad utf-8 binary', badUtf8Binary, 300],
  ['wrong types', wrongTypes, 600],
  ['not an event', notAnEvent, 300],
  ['binary headers', binaryHeaders, 600],
];

/** One run's hostile submissions, reproducible from `seed`. */
export function hostileSubmissions(seed: number): HostileSubmission[] {
  return HOSTILE_MIX.flatMap(([, arb, n], i) => fc.sample(arb, { numRuns: n, seed: seed + i }));
}
