import { RemoteError, request } from '@hermes/bus';
import { Id, contracts, validate } from '@hermes/contracts';
import { CliError, EXIT, UsageError, writeLine, type Command } from './command.js';
import { formatTaskView } from './event-format.js';

/** `hermes status <task-id>`: print a task's current state as the dispatcher reports it. */
export const statusCommand: Command = {
  path: ['status'],
  summary: "show a task's current state",
  args: '<task-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    json: { type: 'boolean', description: 'print the task as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const taskId = positionals[0] ?? '';
    if (!validate(Id, taskId).ok) throw new UsageError(`"${taskId}" is not a task id`);
    const bus = await ctx.bus();
    let view;
    try {
      view = await request(bus, contracts.taskGet, { task_id: taskId });
    } catch (err) {
      if (err instanceof RemoteError && err.code === 'not_found') throw new CliError(`task ${taskId} not found`, EXIT.failed, { cause: err });
      if (err instanceof RemoteError && (err.code === 'no_responders' || err.code === 'timeout')) {
        throw new CliError(`no dispatcher answered (is Hermes running on this NATS?): ${err.wire.message}`, EXIT.failed, { cause: err });
      }
      throw err;
    }
    writeLine(ctx.stdout, values.json === true ? JSON.stringify(view, null, 2) : formatTaskView(view));
    return EXIT.ok;
  },
};
