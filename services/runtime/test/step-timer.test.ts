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

  it('work alongside other phases is reported but not subtracted, and lands in the step where it ends', async () => {
    const seen: StepTiming[] = [];
    const timer = stepTimer((t) => seen.push(t));
    timer.startStep(1);
    const saved = timer.time('checkpoint_results', () => wait(15), { alongside: true });
    timer.startStep(2);
    await timer.time('llm', () => saved.then(() => wait(5)));
    timer.end();

    expect(seen[0]!.checkpoint_results_ms).toBeUndefined();
    expect(seen[1]!.checkpoint_results_ms).toBeGreaterThanOrEqual(13);
    expect(seen[1]!.other_ms).toBeCloseTo(seen[1]!.total_ms - seen[1]!.llm_ms!, 2);
  });

  it('the default timer only runs the work', async () => {
    await expect(noStepTimer.time('llm', async () => 42)).resolves.toBe(42);
  });
});
