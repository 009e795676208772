import { describe, expect, it } from 'vitest';
import { argumentPolicyProblems, type ArgumentRule, type ArgumentTransform } from '@hermes/contracts';
import { brokenRules } from '../src/argument-rules.js';
import { DATE_TIME_HINT, shapeArguments } from '../src/argument-transforms.js';

const schema = {
  type: 'object',
  properties: {
    at: { type: 'string', format: 'date-time' },
    slots: { type: 'array', items: { type: 'object', properties: { start: { type: 'string', format: 'date-time' } } } },
    day: { type: 'string', format: 'date' },
  },
};

describe('shapeArguments: declared transforms', () => {
  const transforms: ArgumentTransform[] = [
    { op: 'alias', field: '/timeout_ms', aliases: ['timeout', 'wait'] },
    { op: 'unit', field: '/timeout_ms', unit: 'ms' },
    { op: 'unit', field: '/distance_m', unit: 'm' },
    { op: 'trim', field: '/name' },
    { op: 'case', field: '/code', to: 'upper' },
  ];

  it('renames an alias, converts units, trims and changes case, reporting each change in order, on a copy', () => {
    const sent = { wait: '1.5 h', distance_m: '2 km', name: '  Ada ', code: 'de' };
    const out = shapeArguments(sent, transforms, { type: 'object' });
    expect(out.issues).toEqual([]);
    expect(out.value).toEqual({ timeout_ms: 5_400_000, distance_m: 2000, name: 'Ada', code: 'DE' });
    expect(out.adjustments.map((a) => a.transform)).toEqual(['alias', 'unit', 'unit', 'trim', 'case']);
    expect(out.adjustments[0]).toEqual({ path: '/timeout_ms', transform: 'alias', from: '/wait', to: '/timeout_ms' });
    expect(sent).toEqual({ wait: '1.5 h', distance_m: '2 km', name: '  Ada ', code: 'de' });
  });

  it('leaves values that need no change alone and reports nothing for them', () => {
    const out = shapeArguments({ timeout_ms: 250, name: 'Ada', code: 'DE' }, transforms, { type: 'object' });
    expect(out).toEqual({ value: { timeout_ms: 250, name: 'Ada', code: 'DE' }, adjustments: [], issues: [] });
  });

  it('keeps an argument sent under its own name and leaves a duplicate alias for validation to refuse', () => {
    const out = shapeArguments({ timeout_ms: 5, timeout: 9 }, transforms, { type: 'object' });
    expect(out.value).toEqual({ timeout_ms: 5, timeout: 9 });
  });

  it('refuses a quantity of another dimension, naming the argument and the units it takes', () => {
    const out = shapeArguments({ timeout_ms: '3 km' }, transforms, { type: 'object' });
    expect(out.issues).toEqual([expect.objectContaining({ path: '/timeout_ms', got: '"3 km"', message: expect.stringContaining('not a duration unit') })]);
    expect(shapeArguments({ timeout_ms: 'soon' }, transforms, { type: 'object' }).issues[0]!.message).toContain('is not a quantity');
  });

  it('reads m as minutes for a duration and metres for a length', () => {
    expect(shapeArguments({ timeout_ms: '2 m', distance_m: '3 m' }, transforms, { type: 'object' }).value).toEqual({ timeout_ms: 120_000, distance_m: 3 });
  });

  it('never writes through a prototype key, even when the model sends one', () => {
    const sent = JSON.parse('{"__proto__": {"polluted": true}, "wait": "1 s"}') as Record<string, unknown>;
    const out = shapeArguments(sent, [{ op: 'trim', field: '/__proto__' }, ...transforms], { type: 'object' });
    expect(out.value.timeout_ms).toBe(1000);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out.value)).toBe(Object.prototype);
  });
});

describe('shapeArguments: date-time arguments', () => {
  it('gives every date-time an explicit offset (UTC when none was written) and a full time, in nested objects too', () => {
    const out = shapeArguments(
      { at: '2026-12-03 09:00', slots: [{ start: '2026-12-03T10:00:00+01:00' }, { start: '2026-12-03T11:30+01:00' }], day: '2026-12-03' },
      [],
      schema,
    );
    expect(out.issues).toEqual([]);
    expect(out.value).toEqual({
      at: '2026-12-03T09:00:00Z',
      slots: [{ start: '2026-12-03T10:00:00+01:00' }, { start: '2026-12-03T11:30:00+01:00' }],
      day: '2026-12-03',
    });
    expect(out.adjustments.map((a) => a.path)).toEqual(['/at', '/slots/1/start']);
  });

  it('keeps a complete ISO 8601 date-time exactly as sent (microseconds, an offset without a colon)', () => {
    const sent = { at: '2026-12-03T09:00:00.123456+0100', slots: [{ start: '2026-12-03T09:00:00Z' }] };
    expect(shapeArguments(sent, [], schema)).toEqual({ value: sent, adjustments: [], issues: [] });
  });

  it.each(['tomorrow', 'next Monday', 'in 2 hours', '2026-12-03', '2026-02-30 10:00', '03/12/2026 09:00'])(
    'refuses %j with the hint to resolve it first',
    (text) => {
      const out = shapeArguments({ at: text }, [], schema);
      expect(out.issues).toEqual([{ path: '/at', message: DATE_TIME_HINT, expected: 'string (format date-time, with an offset)', got: JSON.stringify(text) }]);
      expect(DATE_TIME_HINT).toMatch(/time_now/);
      expect(DATE_TIME_HINT).toMatch(/date_add/);
    },
  );
});

describe('brokenRules', () => {
  const rules: ArgumentRule[] = [
    { name: 'after_go_live', message: 'may not start before 2024-01-01', condition: { field: '/since', op: 'gte', value: '2024-01-01T00:00:00Z' } },
    {
      name: 'ordered',
      message: 'until must follow since',
      condition: {
        any: [
          { field: '/until', op: 'missing' },
          { field: '/until', op: 'gt', ref: '/since' },
        ],
      },
    },
  ];

  it('reports every broken rule with its name, message, the argument it is about and what was sent', () => {
    expect(brokenRules(rules, { since: '2023-12-31T23:00:00-02:00', until: '2024-01-01T02:00:00+00:00' })).toEqual([]);
    expect(brokenRules(rules, { since: '2023-12-31T23:00:00Z', until: '2023-01-01T00:00:00Z' })).toEqual([
      {
        path: '/since',
        message: 'may not start before 2024-01-01',
        expected: 'arguments that satisfy the rule "after_go_live"',
        got: '"2023-12-31T23:00:00Z"',
        rule: 'after_go_live',
      },
      {
        path: '/until',
        message: 'until must follow since',
        expected: 'arguments that satisfy the rule "ordered"',
        got: '"2023-01-01T00:00:00Z"',
        rule: 'ordered',
      },
    ]);
  });
});

describe('argumentPolicyProblems', () => {
  it('refuses unknown units, prototype fields, rule names used twice and malformed conditions, with paths', () => {
    const problems = argumentPolicyProblems({
      transforms: [
        { op: 'unit', field: '/a', unit: 'furlong' },
        { op: 'trim', field: '/x/__proto__' },
      ],
      rules: [
        { name: 'r', message: 'm', condition: { field: '/a', op: 'exists' } },
        { name: 'r', message: 'm', condition: { field: '/a', op: 'gt' } as never },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual(['/transforms/0/unit', '/transforms/1/field', '/rules/1/name', '/rules/1/condition']);
  });
});
