import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/result-cache.js';
import { normalizeResult, shapeResult } from '../src/result-shaper.js';

describe('normalizeResult', () => {
  it('wraps text, keeps structured JSON, and turns nothing into null', () => {
    expect(normalizeResult('hello')).toEqual({ result: 'hello' });
    expect(normalizeResult({ a: [1, 2] })).toEqual({ a: [1, 2] });
    expect(normalizeResult(42)).toBe(42);
    expect(normalizeResult(undefined)).toEqual({ result: null });
  });
});

describe('shapeResult', () => {
  it('leaves a result within the limit untouched', () => {
    expect(shapeResult({ a: 1 }, 100, 'ref')).toEqual({ result: { a: 1 }, truncated: false });
  });

  it('cuts long text to the limit with a marker naming the reference', () => {
    const shaped = shapeResult({ result: 'x'.repeat(5000) }, 1000, 't_1.main.1.0');
    expect(shaped.truncated).toBe(true);
    expect(JSON.stringify(shaped.result).length).toBeLessThanOrEqual(1000);
    expect((shaped.result as { result: string }).result).toMatch(
      /^x+\n…\[truncated: the first \d+ of 5000 characters; the full result is kept as t_1\.main\.1\.0\]$/,
    );
  });

  it('turns a long structured result into the start of its JSON text, still within the limit', () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: i, name: `row "${i}"\n` }));
    const shaped = shapeResult(rows, 2000, 'ref');
    expect(JSON.stringify(shaped.result).length).toBeLessThanOrEqual(2000);
    expect((shaped.result as { result: string }).result).toMatch(/^\[\{"id":0,.*of the JSON result; the full result is kept as ref\]$/s);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level so equal arguments give equal text', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, { y: 2, z: 1 }] }, b: 1 }));
  });
});
