import { isTerminalStatus, taskEventData, wireError, type TaskEvent, type TaskGetRequest, type TaskListReply, type TaskListRequest, type TaskView } from '@hermes/contracts';
import { ReplyError } from '@hermes/bus';
import type { TaskStore } from './task-store.js';
import type { TaskIndex } from './task-index.js';

/**
 * Answers `taskGet`, with the owner's roles as granted now (what the toolbus checks a call's tools
 * against). A task of another user is reported exactly like a missing one. A running task whose
 * last event says a job is waiting out a dependency's outage gets `waiting_for`: the runtime
 * reports each pause as an event, not in the task state the dispatcher owns.
 */
export async function getTask(
  store: TaskStore,
  req: TaskGetRequest,
  o: { rolesOf: (userId: string) => string[]; lastEvent?: (taskId: string) => Promise<TaskEvent | undefined> },
): Promise<TaskView> {
  const found = await store.get(req.task_id);
  if (!found || (req.user_id && found.view.user_id !== req.user_id)) {
    throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
  }
  const view = { ...found.view, roles: o.rolesOf(found.view.user_id) };
  if (!o.lastEvent || isTerminalStatus(view.status)) return view;
  const last = await o.lastEvent(req.task_id);
  const step = last ? taskEventData(last, 'step') : undefined;
  const service = step?.kind === 'waiting' ? step.detail?.['waiting_for'] : undefined;
  return typeof service === 'string' ? { ...view, waiting_for: service } : view;
}

/**
 * Answers `taskList`: the caller's tasks (everyone's when `user_id` is null), newest first, with
 * an opaque cursor for the next page. Reads each listed task's state, so the status is current.
 */
export async function listTasks(store: TaskStore, index: TaskIndex, req: TaskListRequest): Promise<TaskListReply> {
  const limit = req.limit ?? 50;
  const views: TaskView[] = [];
  for (const id of await index.tasksOf(req.user_id)) {
    const found = await store.get(id);
    if (found && (req.status === undefined || found.view.status === req.status)) views.push(found.view);
  }
  const order = (v: TaskView) => `${v.created_at}|${v.task_id}`;
  views.sort((a, b) => (order(a) < order(b) ? 1 : order(a) > order(b) ? -1 : 0));
  const after = req.cursor ? Buffer.from(req.cursor, 'base64url').toString('utf8') : undefined;
  const rest = after ? views.filter((v) => order(v) < after) : views;
  const page = rest.slice(0, limit);
  const last = page.at(-1);
  return {
    tasks: page.map((v) => ({ task_id: v.task_id, user_id: v.user_id, goal: v.goal, status: v.status, created_at: v.created_at, updated_at: v.updated_at })),
    ...(rest.length > limit && last ? { next_cursor: Buffer.from(order(last), 'utf8').toString('base64url') } : {}),
  };
}
