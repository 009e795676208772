import { request } from '@hermes/bus';
import { contracts } from '@hermes/contracts';
import { EXIT, taskIdArg, writeLine, type Command } from './command.js';
import { askService } from './service-request.js';
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
    const taskId = taskIdArg(positionals[0]);
    const bus = await ctx.bus();
    const view = await askService('dispatcher', () => request(bus, contracts.taskGet, { task_id: taskId }), { notFound: () => `task ${taskId} not found` });
    writeLine(ctx.stdout, values.json === true ? JSON.stringify(view, null, 2) : formatTaskView(view));
    return EXIT.ok;
  },
};
