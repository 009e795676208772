import { contracts, ownerFields, type RuntimeJob } from '@hermes/contracts';
import { RemoteError, request, type Bus } from '@hermes/bus';
import { hermesMeter, type Logger } from '@hermes/telemetry';

/** Memories recalled for a job's opening context. */
const RECALL_K = 5;
/** Recall is an extra, not a requirement: a slow memory service must not hold the job up for long. */
export const RECALL_TIMEOUT_MS = 2000;

let counter: ReturnType<ReturnType<typeof hermesMeter>['createCounter']> | undefined;
let counterMeter: ReturnType<typeof hermesMeter> | undefined;

// Made on first use, not at import: the meter must come from the provider telemetry start-up registered.
function recallTimeouts() {
  const meter = hermesMeter();
  if (!counter || counterMeter !== meter) {
    counterMeter = meter;
    counter = meter.createCounter('hermes.memory.recall_timeouts', {
      unit: '{recall}',
      description: "long-term memory recalls that timed out at a job's start (the job started without the user's memories)",
    });
  }
  return counter;
}

/**
 * The user's long-term memories relevant to the goal, as a background block for the opening
 * context ("" when none). Never throws: a task runs without background rather than failing
 * because recall did (memory service down, store unavailable, timeout). A timeout is told to
 * `onTimeout` and counted, so the submitter and operators see that the task started without the
 * user's memories instead of a log line nobody reads.
 */
export async function recallBackground(o: { bus: Bus; job: RuntimeJob; logger: Logger; onTimeout: (timeoutMs: number) => void }): Promise<string> {
  try {
    const reply = await request(
      o.bus,
      contracts.memoryRecall,
      { ...ownerFields(o.job), query: o.job.goal.slice(0, 4000), k: RECALL_K },
      { timeoutMs: RECALL_TIMEOUT_MS },
    );
    return reply.background;
  } catch (err) {
    if (err instanceof RemoteError && err.code === 'timeout') {
      recallTimeouts().add(1);
      o.onTimeout(RECALL_TIMEOUT_MS);
    } else o.logger.warn({ err: (err as Error).message }, 'long-term memory recall failed; starting without background');
    return '';
  }
}
