import { request } from '@hermes/bus';
import { contracts } from '@hermes/contracts';
import { EXIT, taskIdArg, writeLine, type Command } from './command.js';
import { askService } from './service-request.js';
import { formatTaskView } from './event-format.js';

/** `hermes cancel <task-id>`: stop a task; its running jobs are aborted and it ends `cancelled`. */
export const cancelCommand: Command = {
  path: ['cancel'],
  summary: 'cancel a task (running jobs stop at once)',
  args: '<task-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    reason: { type: 'string', description: 'why, recorded on the cancelled event' },
    json: { type: 'boolean', description: 'print the task as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const taskId = taskIdArg(positionals[0]);
    const bus = await ctx.bus();
    const reason = typeof values.reason === 'string' ? values.reason : 'cancelled from the hermes CLI';
    const view = await askService('dispatcher', () => request(bus, contracts.taskCancel, { task_id: taskId, reason }), {
      notFound: () => `task ${taskId} not found`,
    });
    writeLine(ctx.stdout, values.json === true ? JSON.stringify(view, null, 2) : formatTaskView(view));
    return view.status === 'cancelled' ? EXIT.ok : EXIT.failed;
  },
};
