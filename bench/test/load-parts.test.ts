import { describe, expect, it } from 'vitest';
import { loadBenchOptions } from '../src/load-benches.js';
import { steadyRate } from '../src/load-run.js';

describe('load benchmark parts', () => {
  it('defaults to the sizes issue 20 asks for, and BENCH_LOAD_* shrink them', () => {
    const d = loadBenchOptions({});
    expect(d).toMatchObject({
      inflightTasks: 10_000,
      overloadTasks: 30_000,
      capacity: 256,
      latencyMs: 2000,
      saturationRuntimes: [1, 2, 3],
      tool: 'bench_record',
    });
    expect(loadBenchOptions({ BENCH_LOAD_OVERLOAD_TASKS: '300', BENCH_LOAD_RUNTIMES: '1' })).toMatchObject({ overloadTasks: 300, saturationRuntimes: [1] });
  });

  it('refuses sizes that are not positive integers and unknown tools', () => {
    expect(() => loadBenchOptions({ BENCH_LOAD_CAPACITY: '0' })).toThrow(/BENCH_LOAD_CAPACITY must be a positive integer/);
    expect(() => loadBenchOptions({ BENCH_LOAD_TASKS: 'x', BENCH_LOAD_INFLIGHT_TASKS: '1.5' })).toThrow(/BENCH_LOAD_INFLIGHT_TASKS/);
    expect(() => loadBenchOptions({ BENCH_LOAD_TOOL: 'rm' })).toThrow(/BENCH_LOAD_TOOL/);
  });

  it('the steady rate leaves out the first and last tenth of the seconds and counts empty seconds', () => {
    // 20 seconds: a ramp of 1 call in the first two, 100 in the middle with one empty second, 1 in the last two.
    const perSecond: Array<[number, number]> = Array.from({ length: 20 }, (_, i) => [1000 + i, i < 2 || i >= 18 ? 1 : i === 10 ? 0 : 100]);
    perSecond.splice(10, 1); // the empty second is absent from the model's histogram
    expect(steadyRate(perSecond)).toBeCloseTo((15 * 100) / 16, 6);
    expect(steadyRate([])).toBe(0);
  });
});
