import { performance } from 'node:perf_hooks';
import type { DistributedSemaphore } from '@hermes/semaphore';
import { micro, type OverheadResult } from './worker-protocol.js';

export const OVERHEAD_POOL = 'overhead';

/** Sequential acquire→release on a pool nobody else uses and that never fills: the cost of a permit itself. */
export async function runOverhead(o: { sem: DistributedSemaphore; iterations: number; warmup: number }): Promise<OverheadResult> {
  const result: OverheadResult = { mode: 'overhead', acquireMs: [], releaseMs: [] };
  for (let i = 0; i < o.warmup + o.iterations; i++) {
    const started = performance.now();
    const permit = await o.sem.acquire(OVERHEAD_POOL);
    const acquired = performance.now();
    await permit.release({});
    const released = performance.now();
    if (i < o.warmup) continue;
    result.acquireMs.push(micro(acquired - started));
    result.releaseMs.push(micro(released - acquired));
  }
  return result;
}
