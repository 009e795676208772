import type { JsMsg } from '@nats-io/jetstream';
import { contracts, decodeCloudEvent, makeTaskEvent, sourceAndId, taskIdFor, validate, ValidationIssue, type WireError } from '@hermes/contracts';
import { Type } from '@sinclair/typebox';
import type { Bus, DeadLetterHook } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';

const Issues = Type.Array(ValidationIssue);

/**
 * The intake consumer's dead-letter hook: a submission the dispatcher gave up on (its handling
 * kept failing, or failed in a way retrying cannot fix) gets a `rejected` event on its task's
 * subject, carrying the real error and where the message was, so its submitter hears why instead
 * of waiting for ever. Only when source and id are readable (they name the task) and no task
 * exists for them yet: an accepted task's events must not end with a rejection.
 */
export function rejectDeadSubmission(o: { bus: Bus; logger: Logger; taskExists: (taskId: string) => Promise<boolean> }): DeadLetterHook {
  return async (msg, error) => {
    const ref = readableRef(msg);
    if (!ref) {
      o.logger.warn({ seq: msg.seq }, 'dead-lettered submission names no task (no readable source and id); only its dead-letter record says why');
      return;
    }
    const taskId = taskIdFor(ref.source, ref.id);
    if (await o.taskExists(taskId)) {
      o.logger.warn({ task_id: taskId, seq: msg.seq }, 'dead-lettered submission belongs to an existing task; its events are left as they are');
      return;
    }
    const issues = validate(Issues, error.details?.issues);
    const id = `${taskId}:rejected`;
    const data = { task_id: taskId, source_event: ref, error: withMessageRef(error, msg), issues: issues.ok ? issues.value : [] };
    await o.bus.publish(contracts.taskEvents, makeTaskEvent('rejected', { id, source: 'hermes/dispatcher', taskId, data }), { subject: o.bus.subjects.taskEvents(taskId), msgId: id });
  };
}

/** Source and id from the structured body, or from the ce-* headers of a binary-mode event. */
function readableRef(msg: JsMsg): { source: string; id: string } | undefined {
  const header = (name: string) => {
    const key = msg.headers?.keys().find((k) => k.toLowerCase() === name);
    return (key !== undefined && msg.headers?.get(key)) || undefined;
  };
  const decoded = decodeCloudEvent(msg.data, header);
  const ref = decoded.ok ? sourceAndId(decoded.event) : sourceAndId({ source: header('ce-source'), id: header('ce-id') });
  return ref.source && ref.id ? { source: ref.source, id: ref.id } : undefined;
}

/** The error with the stream position and Nats-Msg-Id of the message it answers, to match it to the publish. */
function withMessageRef(error: WireError, msg: JsMsg): WireError {
  const msgId = msg.headers?.get('Nats-Msg-Id') || undefined;
  const deadLetter = { stream: msg.info.stream, stream_seq: msg.seq, ...(msgId ? { nats_msg_id: msgId } : {}) };
  return { ...error, details: { ...error.details, dead_letter: deadLetter } };
}
