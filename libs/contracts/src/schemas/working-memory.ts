import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { Team } from '../owner.js';

/** One scratchpad entry of a task: what a subtask found, readable by later subtasks. */
export const WorkingEntry = Type.Object(
  {
    subtask_id: Type.String({ minLength: 1, maxLength: 128 }),
    key: Type.String({ minLength: 1, maxLength: 200 }),
    value: Type.Unknown({ description: 'any JSON value' }),
    updated_at: Timestamp,
  },
  { title: 'WorkingEntry', additionalProperties: false },
);
export type WorkingEntry = Static<typeof WorkingEntry>;

export const WorkingSetRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    task_id: Id,
    entries: Type.Array(
      Type.Object(
        { subtask_id: Type.String({ minLength: 1, maxLength: 128 }), key: Type.String({ minLength: 1, maxLength: 200 }), value: Type.Unknown() },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { title: 'WorkingSetRequest', additionalProperties: false },
);
export type WorkingSetRequest = Static<typeof WorkingSetRequest>;

export const WorkingGetRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    task_id: Id,
    subtask_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "only this subtask's entries" })),
  },
  { title: 'WorkingGetRequest', additionalProperties: false },
);
export type WorkingGetRequest = Static<typeof WorkingGetRequest>;

export const WorkingEntriesReply = Type.Object({ entries: Type.Array(WorkingEntry) }, { title: 'WorkingEntriesReply', additionalProperties: false });
export type WorkingEntriesReply = Static<typeof WorkingEntriesReply>;

export const WorkingClearRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), task_id: Id },
  { title: 'WorkingClearRequest', additionalProperties: false },
);
export type WorkingClearRequest = Static<typeof WorkingClearRequest>;

export const WorkingClearReply = Type.Object(
  { cleared: Type.Integer({ minimum: 0, description: 'entries removed' }) },
  { title: 'WorkingClearReply', additionalProperties: false },
);
export type WorkingClearReply = Static<typeof WorkingClearReply>;
