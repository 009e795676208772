import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { Condition } from './condition.js';
import { Team } from '../owner.js';
import { TaskTemplate } from './schedules.js';

/**
 * A trigger's subject filter, relative to its team's events (`<prefix>.events.<team>.`): NATS
 * tokens of letters, digits, `_` and `-`, `*` for one token, `>` last for the rest.
 */
export const TriggerSubject = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^(?:[A-Za-z0-9_-]+|\\*)(?:\\.(?:[A-Za-z0-9_-]+|\\*))*(?:\\.>)?$|^>$',
  description: "subject filter relative to the team's events, e.g. metrics.cpu.* (published as <prefix>.events.<team>.metrics.cpu.host1)",
});

/** What a user asks for: `POST /v1/triggers` and the `triggerCreate` request's `spec`. */
export const TriggerSpec = Type.Object(
  {
    trigger_id: Type.Optional(Id),
    subject: TriggerSubject,
    condition: Type.Optional(Condition),
    task: TaskTemplate,
  },
  { title: 'TriggerSpec', additionalProperties: false },
);
export type TriggerSpec = Static<typeof TriggerSpec>;

/** A trigger as stored in the triggers bucket (a persisted contract: `v` says its shape). */
export const Trigger = Type.Object(
  {
    v: Type.Literal(1),
    trigger_id: Id,
    team: Team,
    user_id: Id,
    subject: TriggerSubject,
    condition: Type.Optional(Condition),
    task: TaskTemplate,
    paused: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
    firings: Type.Integer({ minimum: 0 }),
    last_fire_at: Type.Optional(Timestamp),
    last_task_id: Type.Optional(Type.String({ maxLength: 256 })),
    /** Stream sequence of the last event that fired it (a redelivered event does not count again). */
    last_event_seq: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { title: 'Trigger', additionalProperties: false },
);
export type Trigger = Static<typeof Trigger>;

const owner = { team: Type.Optional(Team), user_id: Id };
/** `user_id: null`: every user's of the team (operators, team admins). */
const caller = { team: Type.Optional(Team), user_id: Type.Union([Id, Type.Null()]) };

export const TriggerCreateRequest = Type.Object({ ...owner, spec: TriggerSpec }, { title: 'TriggerCreateRequest', additionalProperties: false });
export type TriggerCreateRequest = Static<typeof TriggerCreateRequest>;

export const TriggerGetRequest = Type.Object({ ...owner, trigger_id: Id }, { title: 'TriggerGetRequest', additionalProperties: false });
export type TriggerGetRequest = Static<typeof TriggerGetRequest>;

export const TriggerListRequest = Type.Object(caller, { title: 'TriggerListRequest', additionalProperties: false });
export type TriggerListRequest = Static<typeof TriggerListRequest>;

export const TriggerListReply = Type.Object({ triggers: Type.Array(Trigger) }, { title: 'TriggerListReply', additionalProperties: false });
export type TriggerListReply = Static<typeof TriggerListReply>;

export const TriggerUpdateRequest = Type.Object(
  { ...owner, trigger_id: Id, paused: Type.Boolean({ description: 'true pauses (matching events start nothing); false resumes' }) },
  { title: 'TriggerUpdateRequest', additionalProperties: false },
);
export type TriggerUpdateRequest = Static<typeof TriggerUpdateRequest>;

export const TriggerDeleteRequest = Type.Object({ ...owner, trigger_id: Id }, { title: 'TriggerDeleteRequest', additionalProperties: false });
export type TriggerDeleteRequest = Static<typeof TriggerDeleteRequest>;

export const TriggerDeleteReply = Type.Object({ deleted: Type.Boolean(), trigger_id: Id }, { title: 'TriggerDeleteReply', additionalProperties: false });
export type TriggerDeleteReply = Static<typeof TriggerDeleteReply>;
