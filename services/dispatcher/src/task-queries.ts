import { ownerOf, teamField, teamOfSubject, wireError, type TaskGetRequest, type TaskListReply, type TaskListRequest, type TaskView } from '@hermes/contracts';
import { ReplyError } from '@hermes/bus';
import type { TaskStore } from './task-store.js';
import type { TaskIndex } from './task-index.js';
import { visibleTo } from './task-visibility.js';

/**
 * Answers `taskGet` (any team) and `teamTaskGet` (`team`: the one the subject names). A task of
 * another user or team is reported exactly like a missing one.
 */
export async function getTask(store: TaskStore, req: TaskGetRequest, team?: string): Promise<TaskView> {
  const found = await store.get(req.task_id);
  if (!found || !visibleTo(found.view, req.user_id, team)) {
    throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
  }
  return found.view;
}

/**
 * Answers `taskList` and `teamTaskList`: the caller's tasks (everyone's — of `team`, or of every
 * team without one — when `user_id` is null), newest first, with an opaque cursor for the next
 * page. Reads each listed task's state, so the status is current (and its owner checked again).
 * A bare `taskList` naming a user lists that user of the default team.
 */
export async function listTasks(store: TaskStore, index: TaskIndex, req: TaskListRequest, team?: string): Promise<TaskListReply> {
  const limit = req.limit ?? 50;
  const views: TaskView[] = [];
  const owner = req.user_id === null ? null : ownerOf({ user_id: req.user_id, ...(team ? { team } : {}) });
  for (const id of await index.tasksOf(owner === null ? (team === undefined ? null : { team }) : owner)) {
    const found = await store.get(id);
    if (found && visibleTo(found.view, owner?.user_id, team ?? owner?.team) && (req.status === undefined || found.view.status === req.status)) views.push(found.view);
  }
  const order = (v: TaskView) => `${v.created_at}|${v.task_id}`;
  views.sort((a, b) => (order(a) < order(b) ? 1 : order(a) > order(b) ? -1 : 0));
  const after = req.cursor ? Buffer.from(req.cursor, 'base64url').toString('utf8') : undefined;
  const rest = after ? views.filter((v) => order(v) < after) : views;
  const page = rest.slice(0, limit);
  const last = page.at(-1);
  return {
    tasks: page.map((v) => ({ task_id: v.task_id, user_id: v.user_id, ...teamField(ownerOf(v).team), goal: v.goal, status: v.status, created_at: v.created_at, updated_at: v.updated_at })),
    ...(rest.length > limit && last ? { next_cursor: Buffer.from(order(last), 'utf8').toString('base64url') } : {}),
  };
}

/** The team a team's request subject names (`<base>.<team>`); a subject naming no valid team is refused. */
export function teamOfRequest(subject: string, base: string): string {
  const team = subject === base ? undefined : teamOfSubject(subject, base);
  if (team === undefined) throw new ReplyError(wireError('invalid_payload', `${subject} names no team`, { subject }));
  return team;
}
