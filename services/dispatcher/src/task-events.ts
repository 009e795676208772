import { contracts, makeTaskEvent, type TaskEventDataByKind, type TaskEventKind } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';

const SOURCE = 'hermes/dispatcher';

/** Publishes a dispatcher event on the task's subject, de-duplicated by a stable event id. */
export async function emitTaskEvent<K extends TaskEventKind>(bus: Bus, kind: K, taskId: string, data: TaskEventDataByKind[K], id = `${taskId}:${kind}`): Promise<void> {
  await bus.publish(contracts.taskEvents, makeTaskEvent(kind, { id, source: SOURCE, taskId, data }), {
    subject: bus.subjects.taskEvents(taskId),
    msgId: id,
  });
}
