import { wireError, type TaskGetRequest, type TaskView } from '@hermes/contracts';
import { ReplyError } from '@hermes/bus';
import type { TaskStore } from './task-store.js';

/** Answers `taskGet`. A task of another user is reported exactly like a missing one. */
export async function getTask(store: TaskStore, req: TaskGetRequest): Promise<TaskView> {
  const found = await store.get(req.task_id);
  if (!found || (req.user_id && found.view.user_id !== req.user_id)) {
    throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
  }
  return found.view;
}
