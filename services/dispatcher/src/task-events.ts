import { contracts, makeTaskEvent, ownerOf, taskEventKind, teamField, type TaskEventDataByKind, type TaskEventKind, type TaskView } from '@hermes/contracts';
import { lastTaskEvent, type Bus } from '@hermes/bus';

/** Which task an event is about: its id and its team (none: the default team). */
export type TaskRef = { readonly task_id: string; readonly team?: string | undefined };

/** The subject of a task's events: under its team's. */
export const taskEventsSubject = (bus: Bus, task: TaskRef): string => bus.subjects.taskEvents(ownerOf({ ...task, user_id: '' }).team, task.task_id);

/** Publishes a dispatcher event on the task's subject, de-duplicated by a stable event id. */
export async function emitTaskEvent<K extends TaskEventKind>(
  bus: Bus,
  kind: K,
  task: TaskRef,
  data: TaskEventDataByKind[K],
  id = `${task.task_id}:${kind}`,
): Promise<void> {
  await bus.publish(contracts.taskEvents, makeTaskEvent(kind, { id, source: bus.eventSource('dispatcher'), taskId: task.task_id, data }), {
    subject: taskEventsSubject(bus, task),
    msgId: id,
  });
}

/** The `accepted` event's data, from the task as stored. */
export function acceptedData(view: TaskView): TaskEventDataByKind['accepted'] {
  return {
    task_id: view.task_id,
    user_id: view.user_id,
    ...teamField(ownerOf(view).team),
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
export async function taskEventsPublished(bus: Bus, task: TaskRef): Promise<{ any: boolean; lastKind?: TaskEventKind }> {
  const last = await lastTaskEvent(bus, task);
  if (!last) return { any: false };
  return { any: true, lastKind: taskEventKind(last.event) };
}
