import type { JsMsg } from '@nats-io/jetstream';
import {
  contracts,
  decodeCloudEvent,
  makeTaskEvent,
  sourceAndId,
  taskIdFor,
  teamOfSubject,
  validate,
  ValidationIssue,
  type TaskRejectedEvent,
} from '@hermes/contracts';
import { Type, type Static } from '@sinclair/typebox';
import type { Bus, DeadLetterHook } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';

const Issues = Type.Array(ValidationIssue);

/**
 * The intake consumer's dead-letter hook: a submission the dispatcher gave up on (its handling
 * kept failing, or failed in a way retrying cannot fix) is answered with a `rejected` event
 * carrying the real error and the message it answers, so its submitter hears why instead of
 * waiting for ever. As the intake's own rejections: on the task's subject when source and id
 * name a task that does not exist yet, else on the catch-all rejected subject (an existing task's
 * events must not end with another message's rejection).
 */
export function rejectDeadSubmission(o: { bus: Bus; logger: Logger; taskExists: (taskId: string) => Promise<boolean> }): DeadLetterHook {
  return async (msg, error) => {
    const team = teamOfSubject(msg.subject, o.bus.subjects.taskSubmitLegacy);
    // A subject naming no team has no submitter who could read an answer (see TaskIntake).
    if (team === undefined) return;
    const ref = readableRef(msg);
    const taskId = ref.source && ref.id ? taskIdFor(team, ref.source, ref.id) : undefined;
    const msgId = header(msg, 'nats-msg-id');
    const issues = validate(Issues, error.details?.issues);
    const data = {
      ...(taskId ? { task_id: taskId } : {}),
      source_event: ref,
      error,
      issues: issues.ok ? issues.value : [],
      submission: { stream_seq: msg.seq, ...(msgId ? { msg_id: msgId } : {}) },
    };
    if (taskId !== undefined && !(await o.taskExists(taskId))) {
      const id = `${taskId}:rejected`;
      await o.bus.publish(contracts.taskEvents, makeTaskEvent('rejected', { id, source: o.bus.eventSource('dispatcher'), taskId, data }), {
        subject: o.bus.subjects.taskEvents(team, taskId),
        msgId: id,
      });
      return;
    }
    const id = `${taskId ?? 'unknown'}:rejected:${msg.seq}`;
    const event = makeTaskEvent('rejected', { id, source: o.bus.eventSource('dispatcher'), taskId: taskId ?? 'unknown', data }) as Static<
      typeof TaskRejectedEvent
    >;
    await o.bus.publish(contracts.taskRejected, event, { subject: o.bus.subjects.taskRejected(team), msgId: id });
    o.logger.warn({ task_id: taskId, seq: msg.seq }, 'dead-lettered submission answered on the rejected subject (it names no new task)');
  };
}

/** Source and id from the structured body, or from the ce-* headers of a binary-mode event. */
function readableRef(msg: JsMsg): { source?: string; id?: string } {
  const decoded = decodeCloudEvent(msg.data, (name) => header(msg, name));
  return decoded.ok ? sourceAndId(decoded.event) : sourceAndId({ source: header(msg, 'ce-source'), id: header(msg, 'ce-id') });
}

function header(msg: JsMsg, name: string): string | undefined {
  const lower = name.toLowerCase();
  const key = msg.headers?.keys().find((k) => k.toLowerCase() === lower);
  return (key !== undefined && msg.headers?.get(key)) || undefined;
}
