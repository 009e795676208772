import { ScheduleSpec, contracts, type ScheduleView } from '@hermes/contracts';
import { stringOption, type Command } from './command.js';
import { ownedCommands } from './owned-commands.js';

/** `hermes schedule create|list|show|pause|resume|delete`: a user's schedules (docs/schedules.md). */
export const SCHEDULE_COMMANDS: readonly Command[] = ownedCommands<ScheduleView>({
  kind: 'schedule',
  spec: ScheduleSpec,
  specHint: '--cron and --goal are required',
  createOptions: {
    cron: { type: 'string', valueName: 'expr', description: 'cron expression: 5 fields, or 6 with seconds first (required)' },
    goal: { type: 'string', valueName: 'text', description: 'the goal of each task (required)' },
    tz: { type: 'string', valueName: 'zone', description: 'IANA time zone the expression is read in (default UTC)' },
    missed: { type: 'string', valueName: 'policy', description: 'after an outage: skip, run_once (default) or catch_up' },
  },
  specOf(values) {
    const tz = stringOption(values, 'tz');
    const missed = stringOption(values, 'missed');
    return { cron: stringOption(values, 'cron'), task: { goal: stringOption(values, 'goal') }, ...(tz ? { timezone: tz } : {}), ...(missed ? { missed } : {}) };
  },
  header: ['SCHEDULE', 'CRON', 'ZONE', 'MISSED', 'STATE', 'NEXT', 'FIRINGS', 'LAST TASK'],
  row: (s) => [s.schedule_id, s.cron, s.timezone, s.missed, s.paused ? 'paused' : 'active', s.next_fire_at ?? '-', String(s.firings), s.last_task_id ?? '-'],
  create: contracts.scheduleCreate,
  get: contracts.scheduleGet,
  list: contracts.scheduleList,
  update: contracts.scheduleUpdate,
  remove: contracts.scheduleDelete,
  summaries: {
    create: 'create a schedule: a cron expression (in a time zone) and the task it starts on each firing',
    list: "list a user's schedules with their next fire times",
    show: 'print one schedule with its next fire time',
    pause: 'pause a schedule: it fires nothing until resumed',
    resume: 'resume a schedule, counting fire times from now',
    delete: 'delete a schedule (the tasks it started stay)',
  },
});
