import { describe, expect, it } from 'vitest';
import { parseArguments } from '../src/argument-parser.js';
import { ArgumentValidator, closeObjectSchemas } from '../src/argument-validator.js';

describe('parseArguments', () => {
  it('reads valid JSON as is, without calling it repaired', () => {
    expect(parseArguments('{"a": 1}')).toEqual({ ok: true, value: { a: 1 }, repaired: false });
  });

  it.each([
    ['a trailing comma', '{"text": "hi", "n": [1, 2,],}', { text: 'hi', n: [1, 2] }],
    ['single quotes', "{'text': 'it works'}", { text: 'it works' }],
    ['a Markdown code fence', '```json\n{"text": "fenced"}\n```', { text: 'fenced' }],
    ['a raw newline inside a string', '{"text": "line one\nline two"}', { text: 'line one\nline two' }],
    ['a missing closing brace', '{"text": "cut off"', { text: 'cut off' }],
    ['an object encoded twice', JSON.stringify(JSON.stringify({ text: 'twice' })), { text: 'twice' }],
  ])('repairs %s', (_what, raw, expected) => {
    expect(parseArguments(raw)).toEqual({ ok: true, value: expected, repaired: true });
  });

  it('takes empty text as no arguments', () => {
    expect(parseArguments('  ')).toEqual({ ok: true, value: {}, repaired: false });
  });

  it('rejects text that is not an object, saying what was expected and what came', () => {
    const parsed = parseArguments('[1, 2]');
    expect(parsed).toMatchObject({ ok: false, issues: [{ path: '', message: 'arguments must be a JSON object', got: '"[1, 2]"' }] });
    expect(parsed.ok || parsed.issues[0]!.expected).toMatch(/JSON object/);
  });
});

describe('ArgumentValidator', () => {
  const validator = new ArgumentValidator();
  const schema = {
    type: 'object',
    properties: {
      date: { type: 'string', format: 'date' },
      days: { type: 'integer', minimum: 1, maximum: 10 },
      mode: { enum: ['fast', 'slow'] },
      when: { type: 'string', format: 'date-or-date-time' },
    },
    required: ['date'],
  };
  const { validate } = validator.prepare(schema);

  it('accepts valid arguments', () => {
    expect(validator.check(validate, { date: '2025-03-01', days: 3, mode: 'fast', when: '2025-03-01T10:00' })).toEqual([]);
  });

  it('explains a format error with the path, the format expected and the value sent', () => {
    expect(validator.check(validate, { date: 'tomorrow' })).toEqual([
      { path: '/date', message: 'must match format "date"', expected: 'string (format date)', got: '"tomorrow"' },
    ]);
  });

  it('names a missing required argument and its type', () => {
    expect(validator.check(validate, {})).toEqual([{ path: '/date', message: 'is required', expected: 'string (format date)', got: 'nothing (missing)' }]);
  });

  it('names an unknown extra argument and lists the allowed ones', () => {
    const [issue] = validator.check(validate, { date: '2025-03-01', dayz: 3 });
    expect(issue).toEqual({ path: '/dayz', message: 'is not an allowed property (allowed: date, days, mode, when)', expected: 'no such property', got: '3' });
  });

  it('explains a wrong type and a value out of range', () => {
    expect(validator.check(validate, { date: '2025-03-01', days: '3' })).toContainEqual({
      path: '/days',
      message: 'must be integer',
      expected: 'integer (>= 1, <= 10)',
      got: '"3"',
    });
    expect(validator.check(validate, { date: '2025-03-01', days: 11 })).toContainEqual(
      expect.objectContaining({ path: '/days', message: 'must be <= 10', got: '11' }),
    );
  });

  it('lists the allowed values of an enum', () => {
    expect(validator.check(validate, { date: '2025-03-01', mode: 'medium' })).toContainEqual(
      expect.objectContaining({ path: '/mode', expected: 'one of "fast", "slow"', got: '"medium"' }),
    );
  });

  it('refuses an impossible calendar date in the date-or-date-time format', () => {
    expect(validator.check(validate, { date: '2025-03-01', when: '2025-02-30' })).toContainEqual(
      expect.objectContaining({ path: '/when', message: 'must match format "date-or-date-time"' }),
    );
  });

  it('refuses a schema with an unknown keyword (strict mode)', () => {
    expect(() => validator.prepare({ type: 'object', properties: { a: { type: 'string', maxLenght: 3 } } })).toThrow(/unknown keyword/);
  });
});

describe('closeObjectSchemas', () => {
  it('closes object schemas that do not decide, at every level', () => {
    expect(
      closeObjectSchemas({
        type: 'object',
        properties: { inner: { type: 'object', properties: { a: { type: 'string' } } }, list: { type: 'array', items: { type: 'object' } } },
      }),
    ).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        inner: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } },
        list: { type: 'array', items: { type: 'object', additionalProperties: false } },
      },
    });
  });

  it('leaves a schema that allows extra properties, or combines parts with allOf, as it is', () => {
    const open = { type: 'object', additionalProperties: { type: 'string' } };
    const combined = { type: 'object', allOf: [{ properties: { a: { type: 'string' } } }] };
    expect(closeObjectSchemas(open)).toEqual(open);
    expect(closeObjectSchemas(combined)).toEqual(combined);
  });
});

describe('parseArguments within the tool-argument limits', () => {
  it('refuses 5,000 and 100,000 levels of nesting on the text, before it is parsed or repaired', () => {
    for (const depth of [5_000, 100_000]) {
      const valid = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const almost = `{'a': ${'['.repeat(depth)}`; // cut off: jsonrepair would be asked to close it
      for (const raw of [valid, almost]) {
        const parsed = parseArguments(raw);
        // The key of the almost-JSON text is not a JSON string, so its pointer segment reads "?".
        expect(parsed).toMatchObject({
          ok: false,
          issues: [{ path: expect.stringMatching(new RegExp(`^/(a|\\?)(/0){31}$`)), expected: 'at most 32', got: String(depth + 1) }],
        });
        expect(parsed.ok || parsed.issues[0]!.message).toMatch(/payload limit maxDepth/);
      }
    }
  });

  it('refuses prototype-pollution keys and over-long strings, naming the path', () => {
    expect(parseArguments('{"q": {"__proto__": {"admin": true}}}')).toMatchObject({ ok: false, issues: [{ path: '/q/__proto__', expected: 'no such key' }] });
    expect(parseArguments(JSON.stringify({ q: 'x'.repeat(256 * 1024 + 1) }))).toMatchObject({
      ok: false,
      issues: [{ path: '/q', got: String(256 * 1024 + 1) }],
    });
  });

  it('accepts arguments exactly at the depth limit', () => {
    const raw = `{"a":${'['.repeat(31)}${']'.repeat(31)}}`;
    expect(parseArguments(raw).ok).toBe(true);
  });
});
