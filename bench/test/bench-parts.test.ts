import { describe, expect, it } from 'vitest';
import { benchOptions } from '../src/bench-options.js';
import { firstCallDelayMs } from '../src/load-worker.js';
import { loopsPerProcess } from '../src/semaphore-bench.js';
import { percentile, summarise } from '../src/stats.js';

describe('benchOptions', () => {
  const defaults = { argv: [], env: {}, defaultResultsDir: '/r' };

  it('defaults to N = 32, L = 200 ms, 1, 2 and 4 processes and 2N loops', () => {
    expect(benchOptions(defaults)).toMatchObject({ capacity: 32, latencyMs: 200, processes: [1, 2, 4], loops: 64, resultsDir: '/r' });
  });

  it('takes env first and arguments over env, with loops following the capacity unless set', () => {
    const o = benchOptions({ ...defaults, env: { BENCH_CAPACITY: '4', BENCH_DURATION_S: '3' }, argv: ['--capacity', '8', '--processes=1,3'] });
    expect(o).toMatchObject({ capacity: 8, durationS: 3, processes: [1, 3], loops: 16 });
  });

  it('rejects unknown flags and bad numbers', () => {
    expect(() => benchOptions({ ...defaults, argv: ['--capacty', '8'] })).toThrow(/unknown argument/);
    expect(() => benchOptions({ ...defaults, env: { BENCH_CAPACITY: '0' } })).toThrow(/capacity/);
  });
});

describe('stats', () => {
  it('percentiles use the nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
  });

  it('an empty sample summarises to NaN rather than throwing', () => {
    expect(summarise([])).toMatchObject({ samples: 0, p50_ms: Number.NaN });
  });
});

describe('spreading the load', () => {
  it('loops are split as evenly as whole numbers allow', () => {
    expect(loopsPerProcess(64, 4)).toEqual([16, 16, 16, 16]);
    expect(loopsPerProcess(10, 4)).toEqual([3, 3, 2, 2]);
  });

  it('the first N calls over all processes start evenly over one latency, the rest half a step later', () => {
    const delays = [0, 1].flatMap((p) => [0, 1, 2, 3].map((i) => firstCallDelayMs({ processIndex: p, processes: 2, capacity: 4, spreadMs: 200 }, i)));
    expect(delays.sort((a, b) => a - b)).toEqual([0, 25, 50, 75, 100, 125, 150, 175]);
  });
});
