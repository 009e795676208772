import { contracts, ownerFields, type RuntimeJob } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';

/** Memories recalled for a job's opening context. */
const RECALL_K = 5;
/** Recall is an extra, not a requirement: a slow memory service must not hold the job up for long. */
const RECALL_TIMEOUT_MS = 2000;

/**
 * The user's long-term memories relevant to the goal, as a background block for the opening
 * context ("" when none). Never throws: a task runs without background rather than failing
 * because recall did (memory service down, store unavailable, timeout).
 */
export async function recallBackground(o: { bus: Bus; job: RuntimeJob; logger: Logger }): Promise<string> {
  try {
    const reply = await request(
      o.bus,
      contracts.memoryRecall,
      { ...ownerFields(o.job), query: o.job.goal.slice(0, 4000), k: RECALL_K },
      { timeoutMs: RECALL_TIMEOUT_MS },
    );
    return reply.background;
  } catch (err) {
    o.logger.warn({ err: (err as Error).message }, 'long-term memory recall failed; starting without background');
    return '';
  }
}
