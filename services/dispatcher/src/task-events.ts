import { contracts, makeTaskEvent, taskEventKind, type TaskEvent, type TaskEventDataByKind, type TaskEventKind, type TaskView } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';

const SOURCE = 'hermes/dispatcher';

/** Publishes a dispatcher event on the task's subject, de-duplicated by a stable event id. */
export async function emitTaskEvent<K extends TaskEventKind>(bus: Bus, kind: K, taskId: string, data: TaskEventDataByKind[K], id = `${taskId}:${kind}`): Promise<void> {
  await bus.publish(contracts.taskEvents, makeTaskEvent(kind, { id, source: SOURCE, taskId, data }), {
    subject: bus.subjects.taskEvents(taskId),
    msgId: id,
  });
}

/** The `accepted` event's data, from the task as stored. */
export function acceptedData(view: TaskView): TaskEventDataByKind['accepted'] {
  return {
    task_id: view.task_id,
    user_id: view.user_id,
    session_id: view.session_id,
    goal: view.goal,
    source_event: view.source_event,
    ...(view.trace_context ? { trace_id: view.trace_context.trace_id } : {}),
  };
}

/**
 * What the task's event stream holds: whether any event (so `accepted`, always the first) and the
 * kind of the last. Asked only on recovery, to tell an announcement a dead replica made from one
 * it never made.
 */
export async function taskEventsPublished(bus: Bus, taskId: string): Promise<{ any: boolean; lastKind?: TaskEventKind }> {
  const last = await lastTaskEvent(bus, taskId);
  if (!last) return { any: false };
  return { any: true, lastKind: taskEventKind(last) };
}

/** The last event on the task's subject, if any. */
export async function lastTaskEvent(bus: Bus, taskId: string): Promise<TaskEvent | undefined> {
  const last = await bus.storedMessage(bus.subjects.streams.taskEvents, { last_by_subj: bus.subjects.taskEvents(taskId) });
  return last ? last.json<TaskEvent>() : undefined;
}
