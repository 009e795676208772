import { describe, expect, it } from 'vitest';
import { noStepTimer, stepTimer, type StepTiming } from '../src/step-timer.js';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('stepTimer', () => {
  it('reports each step when the next one starts, with its phases and the rest as other_ms', async () => {
    const seen: StepTiming[] = [];
    const timer = stepTimer((t) => seen.push(t));
    timer.startStep(1);
    await timer.time('llm', () => wait(20));
    await timer.time('tools', () => wait(10));
    timer.startStep(2);
    await timer.time('llm', () => wait(5));
    timer.end();

    expect(seen.map((t) => t.step)).toEqual([1, 2]);
    expect(seen[0]!.llm_ms).toBeGreaterThanOrEqual(18);
    expect(seen[0]!.tools_ms).toBeGreaterThanOrEqual(8);
    expect(seen[0]!.total_ms).toBeGreaterThanOrEqual(seen[0]!.llm_ms! + seen[0]!.tools_ms!);
    expect(seen[0]!.other_ms).toBeCloseTo(seen[0]!.total_ms - seen[0]!.llm_ms! - seen[0]!.tools_ms!, 2);
  });

  it('the default timer only runs the work', async () => {
    await expect(noStepTimer.time('llm', async () => 42)).resolves.toBe(42);
  });
});
