import { describe, expect, it } from 'vitest';
import { selectBenchmarks } from '../src/bench-selection.js';
import { ExactScan } from '../src/exact-scan.js';
import { memoryRecallOptions } from '../src/memory-recall-options.js';
import { SyntheticMemories } from '../src/synthetic-memories.js';

describe('memory-recall selection and options', () => {
  it('--only memory-recall selects it alone', () => {
    expect(selectBenchmarks({ argv: ['--only', 'memory-recall'], env: {} }).only).toEqual(['memory-recall']);
  });

  it('defaults to 10k and 100k memories with the exact scan at 10k, and takes flags over env', () => {
    const defaults = memoryRecallOptions({ argv: [], env: {}, defaultResultsDir: '/r' });
    expect(defaults).toMatchObject({ sizes: [10_000, 100_000], exactScanAt: 10_000, dimensions: 256, expansionAdd: 64, expansionSearch: 128 });
    const o = memoryRecallOptions({
      argv: ['--sizes=500,2000', '--queries', '20'],
      env: { BENCH_MEMORY_QUERIES: '5', BENCH_MEMORY_BATCH: '50' },
      defaultResultsDir: '/r',
    });
    expect(o).toMatchObject({ sizes: [500, 2000], queries: 20, batch: 50 });
    expect(() => memoryRecallOptions({ argv: ['--size', '5'], env: {}, defaultResultsDir: '/r' })).toThrow(/unknown argument/);
  });
});

describe('ExactScan', () => {
  it('returns the rows of the k most similar vectors, best first', () => {
    const scan = new ExactScan(2, 4);
    for (const v of [
      [1, 0],
      [0, 1],
      [0.8, 0.6],
      [-1, 0],
    ])
      scan.add(Float32Array.from(v));
    expect(scan.search(Float32Array.from([1, 0]), 3)).toEqual([0, 2, 1]);
  });
});

describe('SyntheticMemories', () => {
  it('is the same for the same seed, and a paraphrase reuses words of its memory', () => {
    const a = new SyntheticMemories({ seed: 7 });
    const b = new SyntheticMemories({ seed: 7 });
    const memory = a.memory();
    expect(b.memory()).toBe(memory);
    const words = new Set(memory.split(' '));
    const reused = a
      .paraphrase(memory)
      .split(' ')
      .filter((w) => words.has(w));
    expect(reused.length).toBeGreaterThanOrEqual(3);
  });
});
