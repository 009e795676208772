import { describe, expect, it } from 'vitest';
import { CONDITION_LIMITS, conditionProblems, matchCondition, valueAtPointer, type Condition } from '@hermes/contracts';

/** A condition as it would arrive from outside: checked first, as every caller does. */
function checked(c: unknown): Condition {
  expect(conditionProblems(c)).toEqual([]);
  return c as Condition;
}

describe('matchCondition', () => {
  const order = { order: { total: 120.5, currency: 'EUR', tags: ['vip', 'eu'], placed_at: '2026-12-02T09:00:00+01:00' }, region: 'eu-west' };

  it('compares numbers, strings, lists and date-times as instants', () => {
    expect(matchCondition(checked({ field: '/order/total', op: 'gt', value: 100 }), order)).toBe(true);
    expect(matchCondition(checked({ field: '/order/total', op: 'lte', value: 100 }), order)).toBe(false);
    expect(matchCondition(checked({ field: '/order/currency', op: 'in', value: ['EUR', 'USD'] }), order)).toBe(true);
    expect(matchCondition(checked({ field: '/order/tags', op: 'contains', value: 'vip' }), order)).toBe(true);
    expect(matchCondition(checked({ field: '/region', op: 'starts_with', value: 'eu-' }), order)).toBe(true);
    // 09:00+01:00 is 08:00Z, so it is before 08:30Z, although as text "…T09" sorts after "…T08".
    expect(matchCondition(checked({ field: '/order/placed_at', op: 'lt', value: '2026-12-02T08:30:00Z' }), order)).toBe(true);
    expect(matchCondition(checked({ field: '/order/placed_at', op: 'gt', value: '2026-12-02T07:30:00Z' }), order)).toBe(true);
  });

  it('combines tests with all, any and not, and compares two fields with ref', () => {
    const c = checked({
      all: [
        { field: '/a', op: 'lt', ref: '/b' },
        { not: { field: '/c', op: 'exists' } },
        {
          any: [
            { field: '/d', op: 'eq', value: 1 },
            { field: '/d', op: 'eq', value: 2 },
          ],
        },
      ],
    });
    expect(matchCondition(c, { a: 1, b: 2, d: 2 })).toBe(true);
    expect(matchCondition(c, { a: 3, b: 2, d: 2 })).toBe(false);
    expect(matchCondition(c, { a: 1, b: 2, c: null, d: 2 })).toBe(false);
    expect(matchCondition(c, { a: 1, b: 2, d: 3 })).toBe(false);
  });

  it('never compares values of different types as ordered (a string is not greater than a number)', () => {
    expect(matchCondition(checked({ field: '/n', op: 'gt', value: 5 }), { n: '10' })).toBe(false);
    expect(matchCondition(checked({ field: '/n', op: 'lt', value: 5 }), { n: '10' })).toBe(false);
    expect(matchCondition(checked({ field: '/n', op: 'eq', value: 5 }), { n: { valueOf: 5 } })).toBe(false);
  });

  it('reads only own data properties: __proto__, constructor and prototype of a plain object are missing', () => {
    const value = JSON.parse('{"x": {}}') as unknown;
    for (const field of ['/__proto__', '/constructor', '/x/constructor/name', '/x/__proto__/toString', '/x/hasOwnProperty']) {
      expect(matchCondition(checked({ field, op: 'exists' }), value)).toBe(false);
    }
    // A payload may carry "__proto__" as its own key (JSON.parse makes it one): that is data, read as data.
    const own = JSON.parse('{"__proto__": {"admin": true}}') as unknown;
    expect(matchCondition(checked({ field: '/__proto__/admin', op: 'eq', value: true }), own)).toBe(true);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    // A getter is not JSON data and is never called.
    let called = false;
    const tricky = Object.defineProperty({}, 'g', { get: () => ((called = true), 1), enumerable: true });
    expect(matchCondition(checked({ field: '/g', op: 'eq', value: 1 }), tricky)).toBe(false);
    expect(called).toBe(false);
  });

  it('evaluates against a deeply nested payload and a huge string without recursing into them or failing', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(matchCondition(checked({ field: '/a/a/a', op: 'exists' }), deep)).toBe(true);
    expect(matchCondition(checked({ field: '/b', op: 'missing' }), deep)).toBe(true);
    const huge = 'x'.repeat(5_000_000);
    expect(matchCondition(checked({ field: '/s', op: 'contains', value: 'needle' }), { s: huge })).toBe(false);
    expect(matchCondition(checked({ field: '/s', op: 'ends_with', value: 'xx' }), { s: huge })).toBe(true);
    // A huge string that starts like a date-time is compared as text, not parsed.
    expect(matchCondition(checked({ field: '/s', op: 'gt', value: '2026-01-01T00:00:00Z' }), { s: `2026-12-02T09:00:00Z${huge}` })).toBe(true);
  });

  it('reads array elements by plain index only', () => {
    expect(valueAtPointer({ l: ['a', 'b'] }, '/l/1')).toBe('b');
    for (const p of ['/l/01', '/l/-1', '/l/length', '/l/1e0']) expect(valueAtPointer({ l: ['a', 'b'] }, p)).toBeUndefined();
  });
});

describe('conditionProblems', () => {
  it('refuses nesting deeper than the limit, with the path where it goes too deep', () => {
    let c: unknown = { field: '/a', op: 'exists' };
    for (let i = 0; i < 50; i++) c = { not: c };
    const problems = conditionProblems(c);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toContain(`deeper than ${CONDITION_LIMITS.maxDepth}`);
    expect(problems[0]!.path).toBe('/not'.repeat(CONDITION_LIMITS.maxDepth));
  });

  it('refuses a condition with more field tests than the limit', () => {
    const many = { any: Array.from({ length: 32 }, () => ({ all: Array.from({ length: 3 }, () => ({ field: '/a', op: 'exists' })) })) };
    expect(conditionProblems(many).map((p) => p.message)).toEqual([`holds more than ${CONDITION_LIMITS.maxTests} field tests`]);
  });

  it('refuses unknown operators, code-looking keys, missing values and oversized literals', () => {
    expect(conditionProblems({ field: '/a', op: 'regex', value: '.*' }).length).toBeGreaterThan(0);
    expect(conditionProblems({ field: '/a', op: 'eq', value: 1, $where: 'process.exit()' }).length).toBeGreaterThan(0);
    expect(conditionProblems({ field: '/a', op: 'eq' })[0]!.message).toContain('needs either a scalar value or a ref');
    expect(conditionProblems({ field: '/a', op: 'in', value: 'x' })[0]!.path).toBe('/value');
    expect(conditionProblems({ field: '/a', op: 'eq', value: 'x'.repeat(5000) }).length).toBeGreaterThan(0);
    expect(conditionProblems({ field: 'a', op: 'exists' })[0]!.path).toBe('/field');
    expect(conditionProblems({ all: [] })[0]!.path).toBe('/all');
    expect(conditionProblems({ all: [{ field: '/a', op: 'exists' }], any: [] }).length).toBeGreaterThan(0);
    expect(conditionProblems(null).length).toBe(1);
    expect(conditionProblems(JSON.parse('{"__proto__": {"field": "/a", "op": "exists"}}')).length).toBeGreaterThan(0);
  });
});
