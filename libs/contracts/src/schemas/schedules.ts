import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { Team } from '../owner.js';
import { TaskRequest } from './task-submission.js';

/**
 * What a schedule does with firings an outage left behind (later than the dispatcher's
 * SCHEDULE_GRACE_MS): `skip` them (fire again at the next time), fire `run_once` for all of them
 * together (the default), or `catch_up` on each (at most MAX_CATCH_UP_FIRINGS, oldest dropped first).
 */
export const MissedFirings = Type.Union([Type.Literal('skip'), Type.Literal('run_once'), Type.Literal('catch_up')], {
  title: 'MissedFirings',
  description: 'after an outage: skip the missed firings, fire once for all of them (default), or fire each (bounded)',
});
export type MissedFirings = Static<typeof MissedFirings>;

/** Most firings one catch-up makes for a schedule. */
export const MAX_CATCH_UP_FIRINGS = 100;

/** The task a schedule starts on each firing: a task request without its owner (the schedule's). */
export const TaskTemplate = Type.Omit(TaskRequest, ['user_id'], { title: 'TaskTemplate', additionalProperties: false });
export type TaskTemplate = Static<typeof TaskTemplate>;

/** What a user asks for: `POST /v1/schedules` and the `scheduleCreate` request's `spec`. */
export const ScheduleSpec = Type.Object(
  {
    schedule_id: Type.Optional(Id),
    cron: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'cron expression: 5 fields (minute first) or 6 (seconds first), as croner reads it, e.g. "0 7 * * *" every day at 07:00',
    }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone the expression is read in (default UTC)' })),
    missed: Type.Optional(MissedFirings),
    task: TaskTemplate,
  },
  { title: 'ScheduleSpec', additionalProperties: false },
);
export type ScheduleSpec = Static<typeof ScheduleSpec>;

/** A schedule as stored in the schedules bucket (a persisted contract: `v` says its shape). */
export const Schedule = Type.Object(
  {
    v: Type.Literal(1),
    schedule_id: Id,
    team: Team,
    user_id: Id,
    cron: Type.String({ minLength: 1, maxLength: 128 }),
    timezone: Type.String({ minLength: 1, maxLength: 64 }),
    missed: MissedFirings,
    task: TaskTemplate,
    paused: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
    /** Fire times are counted from here: creation, resumption, or the last firing. */
    fired_through: Timestamp,
    last_fire_at: Type.Optional(Timestamp),
    last_task_id: Type.Optional(Type.String({ maxLength: 256 })),
    firings: Type.Integer({ minimum: 0 }),
  },
  { title: 'Schedule', additionalProperties: false },
);
export type Schedule = Static<typeof Schedule>;

/** A schedule as answered: the stored one with its next fire time (none while paused). */
export const ScheduleView = Type.Composite([Schedule, Type.Object({ next_fire_at: Type.Optional(Timestamp) })], {
  title: 'ScheduleView',
  additionalProperties: false,
});
export type ScheduleView = Static<typeof ScheduleView>;

const owner = { team: Type.Optional(Team), user_id: Id };
/** `user_id: null`: every user's of the team (operators, team admins). */
const caller = { team: Type.Optional(Team), user_id: Type.Union([Id, Type.Null()]) };

export const ScheduleCreateRequest = Type.Object({ ...owner, spec: ScheduleSpec }, { title: 'ScheduleCreateRequest', additionalProperties: false });
export type ScheduleCreateRequest = Static<typeof ScheduleCreateRequest>;

export const ScheduleGetRequest = Type.Object({ ...owner, schedule_id: Id }, { title: 'ScheduleGetRequest', additionalProperties: false });
export type ScheduleGetRequest = Static<typeof ScheduleGetRequest>;

export const ScheduleListRequest = Type.Object(caller, { title: 'ScheduleListRequest', additionalProperties: false });
export type ScheduleListRequest = Static<typeof ScheduleListRequest>;

export const ScheduleListReply = Type.Object({ schedules: Type.Array(ScheduleView) }, { title: 'ScheduleListReply', additionalProperties: false });
export type ScheduleListReply = Static<typeof ScheduleListReply>;

export const ScheduleUpdateRequest = Type.Object(
  {
    ...owner,
    schedule_id: Id,
    paused: Type.Boolean({ description: 'true pauses; false resumes, counting fire times from now (nothing missed while paused fires)' }),
  },
  { title: 'ScheduleUpdateRequest', additionalProperties: false },
);
export type ScheduleUpdateRequest = Static<typeof ScheduleUpdateRequest>;

export const ScheduleDeleteRequest = Type.Object({ ...owner, schedule_id: Id }, { title: 'ScheduleDeleteRequest', additionalProperties: false });
export type ScheduleDeleteRequest = Static<typeof ScheduleDeleteRequest>;

export const ScheduleDeleteReply = Type.Object({ deleted: Type.Boolean(), schedule_id: Id }, { title: 'ScheduleDeleteReply', additionalProperties: false });
export type ScheduleDeleteReply = Static<typeof ScheduleDeleteReply>;
