import { describe, expect, it } from 'vitest';
import { CUT_MARKER, renderCompactJson } from '../src/compact-json.js';
import { jsonSection, MAX_RENDERED_JSON_CHARS } from '../src/prompt-builder.js';

const unbounded = { maxChars: Number.MAX_SAFE_INTEGER };

/** `{"a":{"a":...{"leaf":true}...}}`, built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe('renderCompactJson', () => {
  it('writes what JSON.stringify writes without indentation', () => {
    const values: unknown[] = [
      { repo: 'hermes', labels: ['bug', 'p1'], n: 3.5, ok: false, none: null },
      { quote: 'say "hi"\n\tthen \\ leave', unicode: 'naïve ✓ 🚀', control: '\u0000\u001f' },
      [1, [2, [3, []]], {}, { x: [] }],
      { skipped: undefined, kept: 1, nan: Number.NaN, inf: Number.POSITIVE_INFINITY },
      [undefined, null],
      'just a string',
      42,
      null,
    ];
    for (const value of values) expect(renderCompactJson(value, unbounded)).toEqual({ text: JSON.stringify(value), complete: true });
  });

  it('renders a 4,000-deep object in as many characters as its compact JSON, linear in the depth', () => {
    const deep = renderCompactJson(nested(4_000), unbounded).text;
    const twiceAsDeep = renderCompactJson(nested(8_000), unbounded).text;

    expect(deep).toBe(JSON.stringify(nested(4_000)));
    // 6 characters (`{"a":` and `}`) a level, plus the leaf: about 24 KB, where pretty-printing made ~16 MB.
    expect(deep.length).toBe(6 * 4_000 + '{"leaf":true}'.length);
    expect(twiceAsDeep.length - deep.length).toBe(6 * 4_000);
  });

  it('renders nesting deeper than JSON.stringify can without overflowing the stack', () => {
    const value = nested(20_000);
    expect(() => JSON.stringify(value)).toThrow(RangeError);

    const rendered = renderCompactJson(value, unbounded);

    expect(rendered.complete).toBe(true);
    expect(rendered.text.length).toBe(6 * 20_000 + '{"leaf":true}'.length);
  });

  it('stops at maxChars and marks the cut', () => {
    const rendered = renderCompactJson({ rows: Array.from({ length: 10_000 }, (_, i) => ({ id: i, name: `row ${i}` })) }, { maxChars: 1_000 });

    expect(rendered.complete).toBe(false);
    expect(rendered.text).toHaveLength(1_000 + CUT_MARKER.length);
    expect(rendered.text.endsWith(CUT_MARKER)).toBe(true);
    expect(rendered.text.startsWith('{"rows":[{"id":0,"name":"row 0"},')).toBe(true);
  });

  it('cuts one huge string without escaping all of it', () => {
    const rendered = renderCompactJson({ blob: 'x'.repeat(5_000_000) }, { maxChars: 100 });

    expect(rendered).toEqual({ text: `{"blob":"${'x'.repeat(100 - '{"blob":"'.length)}${CUT_MARKER}`, complete: false });
  });

  it('a value of exactly maxChars is complete', () => {
    const value = { k: 'v' };
    expect(renderCompactJson(value, { maxChars: JSON.stringify(value).length })).toEqual({ text: '{"k":"v"}', complete: true });
  });
});

describe('jsonSection', () => {
  it('is a titled compact block, bounded by MAX_RENDERED_JSON_CHARS', () => {
    expect(jsonSection('Inputs', { a: [1, 2] })).toBe('\n\nInputs (JSON):\n{"a":[1,2]}');
    const huge = jsonSection('Inputs', { blob: 'y'.repeat(MAX_RENDERED_JSON_CHARS) });
    expect(huge.endsWith(CUT_MARKER)).toBe(true);
    expect(huge.length).toBeLessThanOrEqual('\n\nInputs (JSON):\n'.length + MAX_RENDERED_JSON_CHARS + CUT_MARKER.length);
  });
});
