import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TokenUsage, WireError } from './common.js';
import { TaskResult } from './task-events.js';

export const TaskStatus = Type.Union([
  Type.Literal('accepted'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export type TaskStatus = Static<typeof TaskStatus>;

/** A task as the dispatcher reports it (`GET /v1/tasks/:id`, `hermes status`). */
export const TaskView = Type.Object(
  {
    task_id: Id,
    user_id: Id,
    session_id: Id,
    goal: Type.String(),
    status: TaskStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
    source_event: Type.Object({ source: Type.String(), id: Type.String() }, { additionalProperties: false }),
    attempts: Type.Integer({ minimum: 0, description: 'runtime jobs started for this task, redeliveries included' }),
    usage: TokenUsage,
    result: Type.Optional(TaskResult),
    error: Type.Optional(WireError),
  },
  { title: 'TaskView', additionalProperties: false },
);
export type TaskView = Static<typeof TaskView>;

export const TaskGetRequest = Type.Object(
  {
    task_id: Id,
    user_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'when set, a task of another user is reported as not found' })),
  },
  { title: 'TaskGetRequest', additionalProperties: false },
);
export type TaskGetRequest = Static<typeof TaskGetRequest>;

export const TaskCancelRequest = Type.Object(
  {
    task_id: Id,
    user_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'when set, only that user\'s task can be cancelled (others look not found)' })),
    reason: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { title: 'TaskCancelRequest', additionalProperties: false },
);
export type TaskCancelRequest = Static<typeof TaskCancelRequest>;

/** Broadcast to every runtime when a task is cancelled, so it stops the task's jobs at once. */
export const TaskCancelledNotice = Type.Object(
  { task_id: Id, reason: Type.Optional(Type.String()) },
  { title: 'TaskCancelledNotice', additionalProperties: false },
);
export type TaskCancelledNotice = Static<typeof TaskCancelledNotice>;
