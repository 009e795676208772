import { request } from '@hermes/bus';
import { Id, ScheduleSpec, contracts, teamField, validate, type ScheduleView } from '@hermes/contracts';
import { EXIT, TEAM_OPTION, UsageError, stringOption, teamOption, writeLine, type Command, type CommandContext, type OptionValues } from './command.js';
import { askService } from './service-request.js';
import { formatTable } from './text-table.js';

const USER_OPTION = { user: { type: 'string' as const, valueName: 'id', description: 'user who owns the schedule (default: $HERMES_USER or cli-user)' } };
const JSON_OPTION = { json: { type: 'boolean' as const, description: 'print the reply as JSON' } };

function ownerOf(values: OptionValues, env: NodeJS.ProcessEnv): { user_id: string; team?: string } {
  const userId = stringOption(values, 'user') ?? env.HERMES_USER ?? 'cli-user';
  if (!validate(Id, userId).ok) throw new UsageError(`"${userId}" is not a user id`);
  return { user_id: userId, ...teamField(teamOption(values, env)) };
}

function scheduleIdArg(value: string | undefined): string {
  if (!validate(Id, value ?? '').ok) throw new UsageError(`"${value ?? ''}" is not a schedule id`);
  return value!;
}

function printSchedule(ctx: CommandContext, s: ScheduleView, json: boolean): void {
  if (json) return writeLine(ctx.stdout, JSON.stringify(s, null, 2));
  writeLine(ctx.stdout, formatTable([['SCHEDULE', 'CRON', 'ZONE', 'MISSED', 'STATE', 'NEXT', 'FIRINGS', 'LAST TASK'], row(s)]));
}
const row = (s: ScheduleView) => [
  s.schedule_id,
  s.cron,
  s.timezone,
  s.missed,
  s.paused ? 'paused' : 'active',
  s.next_fire_at ?? '-',
  String(s.firings),
  s.last_task_id ?? '-',
];

/** `hermes schedule create --cron <expr> --goal <text>`: a task started on every firing. */
const scheduleCreateCommand: Command = {
  path: ['schedule', 'create'],
  summary: 'create a schedule: a cron expression (in a time zone) and the task it starts on each firing',
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: {
    ...TEAM_OPTION,
    ...USER_OPTION,
    cron: { type: 'string', valueName: 'expr', description: 'cron expression: 5 fields, or 6 with seconds first (required)' },
    goal: { type: 'string', valueName: 'text', description: 'the goal of each task (required)' },
    tz: { type: 'string', valueName: 'zone', description: 'IANA time zone the expression is read in (default UTC)' },
    missed: { type: 'string', valueName: 'policy', description: 'after an outage: skip, run_once (default) or catch_up' },
    id: { type: 'string', valueName: 'id', description: 'schedule id (default: a new one)' },
    ...JSON_OPTION,
  },
  async execute({ values }, ctx) {
    const tz = stringOption(values, 'tz');
    const missed = stringOption(values, 'missed');
    const id = stringOption(values, 'id');
    const spec = {
      cron: stringOption(values, 'cron'),
      task: { goal: stringOption(values, 'goal') },
      ...(tz ? { timezone: tz } : {}),
      ...(missed ? { missed } : {}),
      ...(id ? { schedule_id: id } : {}),
    };
    const checked = validate(ScheduleSpec, spec);
    if (!checked.ok)
      throw new UsageError(`invalid schedule: ${checked.issues.map((i) => `${i.path} ${i.message}`).join('; ')} (--cron and --goal are required)`);
    const bus = await ctx.bus();
    const view = await askService('dispatcher', () => request(bus, contracts.scheduleCreate, { ...ownerOf(values, ctx.env), spec: checked.value }), {
      explainErrors: true,
    });
    printSchedule(ctx, view, values.json === true);
    return EXIT.ok;
  },
};

/** `hermes schedule list`: a user's schedules (`--all`: every user's of the team). */
const scheduleListCommand: Command = {
  path: ['schedule', 'list'],
  summary: "list a user's schedules with their next fire times",
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: { ...TEAM_OPTION, ...USER_OPTION, all: { type: 'boolean', description: "every user's schedules of the team" }, ...JSON_OPTION },
  async execute({ values }, ctx) {
    const owner = ownerOf(values, ctx.env);
    const bus = await ctx.bus();
    const reply = await askService('dispatcher', () => request(bus, contracts.scheduleList, { ...owner, ...(values.all === true ? { user_id: null } : {}) }), {
      explainErrors: true,
    });
    if (values.json === true) writeLine(ctx.stdout, JSON.stringify(reply, null, 2));
    else writeLine(ctx.stdout, formatTable([['SCHEDULE', 'CRON', 'ZONE', 'MISSED', 'STATE', 'NEXT', 'FIRINGS', 'LAST TASK'], ...reply.schedules.map(row)]));
    return EXIT.ok;
  },
};

/** `hermes schedule show|pause|resume|delete <id>`: one schedule of the user. */
function oneSchedule(verb: 'show' | 'pause' | 'resume' | 'delete', summary: string): Command {
  return {
    path: ['schedule', verb],
    summary,
    args: '<schedule-id>',
    minArgs: 1,
    maxArgs: 1,
    options: { ...TEAM_OPTION, ...USER_OPTION, ...JSON_OPTION },
    async execute({ values, positionals }, ctx) {
      const req = { ...ownerOf(values, ctx.env), schedule_id: scheduleIdArg(positionals[0]) };
      const bus = await ctx.bus();
      const notFound = { explainErrors: true, notFound: () => `no schedule ${req.schedule_id} of ${req.user_id}` };
      if (verb === 'delete') {
        const reply = await askService('dispatcher', () => request(bus, contracts.scheduleDelete, req), notFound);
        if (!reply.deleted) throw new UsageError(notFound.notFound());
        writeLine(ctx.stdout, values.json === true ? JSON.stringify(reply) : `deleted ${req.schedule_id}`);
        return EXIT.ok;
      }
      const view =
        verb === 'show'
          ? await askService('dispatcher', () => request(bus, contracts.scheduleGet, req), notFound)
          : await askService('dispatcher', () => request(bus, contracts.scheduleUpdate, { ...req, paused: verb === 'pause' }), notFound);
      printSchedule(ctx, view, values.json === true);
      return EXIT.ok;
    },
  };
}

export const SCHEDULE_COMMANDS: readonly Command[] = [
  scheduleCreateCommand,
  scheduleListCommand,
  oneSchedule('show', 'print one schedule with its next fire time'),
  oneSchedule('pause', 'pause a schedule: it fires nothing until resumed'),
  oneSchedule('resume', 'resume a schedule, counting fire times from now'),
  oneSchedule('delete', 'delete a schedule (the tasks it started stay)'),
];
