import { request } from '@hermes/bus';
import { contracts, validate, TaskListRequest } from '@hermes/contracts';
import { EXIT, TEAM_OPTION, UsageError, stringOption, teamOption, writeLine, type Command } from './command.js';
import { askService } from './service-request.js';

/** `hermes tasks`: list a user's tasks (or everyone's with --all), newest first. */
export const tasksCommand: Command = {
  path: ['tasks'],
  summary: "list a user's tasks (of one team with --team), newest first",
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: {
    user: { type: 'string', valueName: 'id', description: 'whose tasks (default: $HERMES_USER)' },
    all: { type: 'boolean', description: "every user's tasks (of every team; of one with --team)" },
    ...TEAM_OPTION,
    status: { type: 'string', valueName: 'status', description: 'only tasks in this status (accepted, running, completed, failed, cancelled)' },
    limit: { type: 'string', valueName: 'n', description: 'at most n tasks (default 50)' },
    cursor: { type: 'string', valueName: 'cursor', description: 'the next page, as printed after a full page' },
    json: { type: 'boolean', description: 'print the reply as JSON' },
  },
  async execute({ values }, ctx) {
    const user = values.all === true ? null : (stringOption(values, 'user') ?? ctx.env.HERMES_USER ?? 'cli-user');
    const limit = stringOption(values, 'limit');
    const req = {
      user_id: user,
      ...(stringOption(values, 'status') ? { status: stringOption(values, 'status') } : {}),
      ...(limit ? { limit: Number(limit) } : {}),
      ...(stringOption(values, 'cursor') ? { cursor: stringOption(values, 'cursor') } : {}),
    };
    const checked = validate(TaskListRequest, req);
    if (!checked.ok) throw new UsageError(`invalid options: ${checked.issues.map((i) => `${i.path} ${i.message}`).join('; ')}`);
    // A team's own list subject answers only its tasks; the bare one names users of the default team
    // and, with --all, lists every team's.
    const team = stringOption(values, 'team') !== undefined || ctx.env.HERMES_TEAM !== undefined ? teamOption(values, ctx.env) : undefined;
    const bus = await ctx.bus();
    const reply = await askService('dispatcher', () =>
      request(bus, contracts.taskList, checked.value, team === undefined ? {} : { subject: bus.subjects.teamTaskList(team) }),
    );
    if (values.json === true) {
      writeLine(ctx.stdout, JSON.stringify(reply, null, 2));
      return EXIT.ok;
    }
    for (const t of reply.tasks)
      writeLine(ctx.stdout, `${t.task_id}  ${t.status.padEnd(9)}  ${t.created_at}  ${t.goal.length > 60 ? `${t.goal.slice(0, 59)}…` : t.goal}`);
    if (reply.next_cursor) writeLine(ctx.stdout, `more: hermes tasks --cursor ${reply.next_cursor}`);
    return EXIT.ok;
  },
};
