import { taskEventDataTitle, taskEventType, type TaskEventDataByKind, type TaskEventKind, type TaskEvent } from './schemas/task-events.js';
import { dataSchemaFor } from './event-source.js';
import { currentTraceContext } from './trace-context.js';

/**
 * Builds a task event. `id` should be stable for the same logical event (for example
 * `<task>:completed`): it doubles as the Nats-Msg-Id, so a producer that crashes after publishing
 * and publishes again does not show the submitter the event twice. `source` is the emitting
 * service's absolute URI (`Bus.eventSource`). The active trace context travels as the CloudEvents
 * distributed-tracing extension (`traceparent`, `tracestate`), besides the NATS headers, so it
 * survives a bridge that keeps only the event; `trace` overrides it.
 */
export function makeTaskEvent<K extends TaskEventKind>(
  kind: K,
  opts: { id: string; source: string; taskId: string; data: TaskEventDataByKind[K]; time?: Date; trace?: { traceparent?: string; tracestate?: string } },
): TaskEvent {
  return {
    specversion: '1.0',
    id: opts.id,
    source: opts.source,
    type: taskEventType(kind),
    subject: opts.taskId,
    time: (opts.time ?? new Date()).toISOString(),
    datacontenttype: 'application/json',
    dataschema: dataSchemaFor(taskEventDataTitle(kind)),
    ...(opts.trace ?? currentTraceContext()),
    data: opts.data,
  } as TaskEvent;
}

/** The kind of a task event, read from its CloudEvents `type`. */
export function taskEventKind(event: Pick<TaskEvent, 'type'>): TaskEventKind {
  return event.type.slice('io.hermes.task.'.length) as TaskEventKind;
}

/** The event's data when it is of `kind` (typed), else undefined. */
export function taskEventData<K extends TaskEventKind>(event: TaskEvent, kind: K): TaskEventDataByKind[K] | undefined {
  return taskEventKind(event) === kind ? (event.data as TaskEventDataByKind[K]) : undefined;
}
