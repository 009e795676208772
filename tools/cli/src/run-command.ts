import { hostname } from 'node:os';
import { followTaskEvents, submitTask } from '@hermes/bus';
import { Id, TERMINAL_EVENT_KINDS, taskEventKind, validate, type TaskEventKind } from '@hermes/contracts';
import { CliError, EXIT, TEAM_OPTION, UsageError, stringOption, teamOption, writeLine, type Command } from './command.js';
import { formatTaskEvent } from './event-format.js';

/** `hermes run "<goal>"`: submit a task and follow its events until it ends. */
export const runCommand: Command = {
  path: ['run'],
  summary: 'submit a task and follow its events until it ends',
  args: '"<goal>"',
  minArgs: 1,
  maxArgs: 1,
  options: {
    user: { type: 'string', valueName: 'id', description: 'user to run as (default: $HERMES_USER or cli-user)' },
    session: { type: 'string', valueName: 'id', description: 'continue this session' },
    ...TEAM_OPTION,
    json: { type: 'boolean', description: 'print each event as one JSON line' },
  },
  async execute({ values, positionals }, ctx) {
    const goal = positionals[0] ?? '';
    if (goal.trim() === '') throw new UsageError('the goal must not be empty');
    const userId = checkedId('--user', stringOption(values, 'user') ?? ctx.env.HERMES_USER ?? 'cli-user');
    const session = stringOption(values, 'session');
    const sessionId = session === undefined ? undefined : checkedId('--session', session);
    const json = values.json === true;
    // Submitted on the team's own subject: the dispatcher takes the team from there, never the payload.
    const team = teamOption(values, ctx.env);

    const bus = await ctx.bus();
    let taskId: string;
    try {
      ({ taskId } = await submitTask(
        bus,
        { user_id: userId, goal, ...(sessionId ? { session_id: sessionId } : {}) },
        { team, source: `/hermes/cli/${hostname()}` },
      ));
    } catch (err) {
      // nats.js reports a subject no stream captures as "jetstream is not enabled"; say what it means here.
      const why = (err as Error).name === 'JetStreamNotEnabled' ? `no stream takes ${bus.subjects.taskSubmit(team)}` : (err as Error).message;
      throw new CliError(`could not submit the task: ${why} (is Hermes running on this NATS?)`, EXIT.failed, { cause: err });
    }
    // With --json, stdout carries only events (each names its task in `subject`).
    writeLine(json ? ctx.stderr : ctx.stdout, `task ${taskId}`);

    let last: TaskEventKind | undefined;
    for await (const { event } of followTaskEvents(bus, { team, task_id: taskId }, ctx.signal ? { signal: ctx.signal } : {})) {
      writeLine(ctx.stdout, json ? JSON.stringify(event) : formatTaskEvent(event));
      last = taskEventKind(event);
    }
    if (last === undefined || !TERMINAL_EVENT_KINDS.includes(last)) {
      writeLine(ctx.stderr, `stopped following; the task goes on (hermes status ${taskId})`);
      return EXIT.interrupted;
    }
    return last === 'completed' ? EXIT.ok : EXIT.failed;
  },
};

function checkedId(flag: string, value: string): string {
  if (!validate(Id, value).ok) throw new UsageError(`${flag} must be 1-128 characters of letters, digits, _ : @ - (got "${value}")`);
  return value;
}
