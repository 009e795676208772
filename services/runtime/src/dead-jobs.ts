import type { JsMsg } from '@nats-io/jetstream';
import { contracts, Id, validate, type RuntimeResult } from '@hermes/contracts';
import { decodeJson, type Bus, type DeadLetterHook } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';

/**
 * The job consumer's dead-letter hook: a job given up on (crashed its runtime on every delivery,
 * failed with a programming error, or does not even match its contract) is reported as a failed
 * result with the error, so the dispatcher ends its subtask instead of waiting for
 * SUBTASK_TIMEOUT_MS. The result's Nats-Msg-Id is the job's own (`<job_id>:result`): when the
 * runner did report before dying, this one is dropped as its duplicate.
 */
export function reportDeadJob(o: { bus: Bus; logger: Logger }): DeadLetterHook {
  return async (msg, error) => {
    const ids = jobIds(msg);
    if (!ids) {
      o.logger.warn({ seq: msg.seq, code: error.code }, 'dead-lettered job names no job, task and subtask; no result reported');
      return;
    }
    const result: RuntimeResult = { ...ids, attempt: msg.info.deliveryCount, outcome: 'failed', error, usage: { input_tokens: 0, output_tokens: 0 } };
    await o.bus.publish(contracts.runtimeResults, result, { msgId: `${ids.job_id}:result`, span: true });
    o.logger.warn({ task_id: ids.task_id, job_id: ids.job_id, code: error.code }, 'dead-lettered job reported failed');
  };
}

/** The ids of a job, read even from one that fails its contract in other ways. */
function jobIds(msg: JsMsg): Pick<RuntimeResult, 'job_id' | 'task_id' | 'subtask_id'> | undefined {
  const decoded = decodeJson(msg.data);
  if (!decoded.ok || typeof decoded.value !== 'object' || decoded.value === null) return undefined;
  const { job_id, task_id, subtask_id } = decoded.value as Record<string, unknown>;
  const ok = [job_id, task_id, subtask_id].every((v) => validate(Id, v).ok);
  return ok ? { job_id: job_id as string, task_id: task_id as string, subtask_id: subtask_id as string } : undefined;
}
