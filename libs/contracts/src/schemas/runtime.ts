import { Type, type Static } from '@sinclair/typebox';
import { Id, TokenUsage, WireError } from './common.js';
import { TaskBudget } from './task-submission.js';

export const ModelRole = Type.Union([Type.Literal('planner'), Type.Literal('worker'), Type.Literal('summarizer')]);

/** One unit of agent work for the runtime pool. */
export const RuntimeJob = Type.Object(
  {
    job_id: Id,
    task_id: Id,
    subtask_id: Id,
    user_id: Id,
    roles: Type.Optional(Type.Array(Type.String(), { description: "the user's roles, for tool permissions (default ['user'])" })),
    session_id: Id,
    goal: Type.String({ minLength: 1 }),
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tools: Type.Optional(Type.Array(Type.String())),
    budget: Type.Optional(TaskBudget),
    stream: Type.Optional(Type.Boolean()),
    model_role: ModelRole,
  },
  { title: 'RuntimeJob', additionalProperties: false },
);
export type RuntimeJob = Static<typeof RuntimeJob>;

/** What the runtime reports back to the dispatcher when a job ends. */
export const RuntimeResult = Type.Object(
  {
    job_id: Id,
    task_id: Id,
    subtask_id: Id,
    attempt: Type.Integer({ minimum: 1, description: 'delivery attempt of the job that produced this result' }),
    outcome: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
    output: Type.Optional(Type.String()),
    error: Type.Optional(WireError),
    usage: TokenUsage,
    model: Type.Optional(Type.String()),
  },
  { title: 'RuntimeResult', additionalProperties: false },
);
export type RuntimeResult = Static<typeof RuntimeResult>;
