import {
  isTerminalStatus,
  ownerOf,
  taskEventData,
  teamField,
  teamOfSubject,
  wireError,
  type Owner,
  type TaskEvent,
  type TaskGetRequest,
  type TaskListReply,
  type TaskListRequest,
  type TaskView,
} from '@hermes/contracts';
import { ReplyError } from '@hermes/bus';
import type { TaskStore } from './task-store.js';
import type { TaskIndex } from './task-index.js';
import { visibleTo } from './task-visibility.js';

/** What {@link getTask} looks up besides the task: roles by owner, the task's last event, and the team a team's subject names. */
export interface TaskLookups {
  /** The owner's roles as granted now: a user id names a user only inside its team. */
  readonly rolesOf: (owner: Owner) => string[];
  /** The last event on the task's subject (under its team's), for `waiting_for`. */
  readonly lastEvent?: (task: TaskView) => Promise<TaskEvent | undefined>;
  /** Set for `teamTaskGet`: only this team's tasks are found. */
  readonly team?: string;
}

/**
 * Answers `taskGet` (any team, by task id: the toolbus asks this way) and `teamTaskGet` (`team`:
 * the one the subject names), with the owner's roles as granted now (what the toolbus checks a
 * call's tools against). A task of another user or team is reported exactly like a missing one.
 * A running task whose last event says a job is waiting out a dependency's outage gets
 * `waiting_for`: the runtime reports each pause as an event, not in the task state the dispatcher owns.
 */
export async function getTask(store: TaskStore, req: TaskGetRequest, o: TaskLookups): Promise<TaskView> {
  const found = await store.get(req.task_id);
  if (!found || !visibleTo(found.view, req.user_id, o.team)) {
    throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
  }
  const view = { ...found.view, roles: o.rolesOf(ownerOf(found.view)) };
  if (!o.lastEvent || isTerminalStatus(view.status)) return view;
  const last = await o.lastEvent(found.view);
  const step = last ? taskEventData(last, 'step') : undefined;
  const service = step?.kind === 'waiting' ? step.detail?.['waiting_for'] : undefined;
  return typeof service === 'string' ? { ...view, waiting_for: service } : view;
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
  // Times compare as instants: the caller's offset ("+02:00") need not be the stored one ("Z").
  const since = req.since === undefined ? -Infinity : Date.parse(req.since);
  const until = req.until === undefined ? Infinity : Date.parse(req.until);
  for (const id of await index.tasksOf(owner === null ? (team === undefined ? null : { team }) : owner)) {
    const found = await store.get(id);
    if (!found || !visibleTo(found.view, owner?.user_id, team ?? owner?.team)) continue;
    const created = Date.parse(found.view.created_at);
    if ((req.status === undefined || found.view.status === req.status) && created >= since && created <= until) views.push(found.view);
  }
  const order = (v: TaskView) => `${v.created_at}|${v.task_id}`;
  views.sort((a, b) => (order(a) < order(b) ? 1 : order(a) > order(b) ? -1 : 0));
  const after = req.cursor ? Buffer.from(req.cursor, 'base64url').toString('utf8') : undefined;
  const rest = after ? views.filter((v) => order(v) < after) : views;
  const page = rest.slice(0, limit);
  const last = page.at(-1);
  return {
    tasks: page.map((v) => ({
      task_id: v.task_id,
      user_id: v.user_id,
      ...teamField(ownerOf(v).team),
      goal: v.goal,
      status: v.status,
      created_at: v.created_at,
      updated_at: v.updated_at,
    })),
    ...(rest.length > limit && last ? { next_cursor: Buffer.from(order(last), 'utf8').toString('base64url') } : {}),
  };
}

/** The team a team's request subject names (`<base>.<team>`); a subject naming no valid team is refused. */
export function teamOfRequest(subject: string, base: string): string {
  const team = subject === base ? undefined : teamOfSubject(subject, base);
  if (team === undefined) throw new ReplyError(wireError('invalid_payload', `${subject} names no team`, { subject }));
  return team;
}
