import { request } from '@hermes/bus';
import { contracts } from '@hermes/contracts';
import { EXIT, taskIdArg, writeLine, type Command } from './command.js';
import { askService } from './service-request.js';
import { formatTaskView } from './event-format.js';

/** `hermes answer <task-id> "<text>"`: answer the question the task asked (ask_user); it resumes where it stopped. */
export const answerCommand: Command = {
  path: ['answer'],
  summary: 'answer the question a task asked (it resumes where it stopped)',
  args: '<task-id> <answer>',
  minArgs: 2,
  maxArgs: 2,
  options: {
    user: { type: 'string', description: "answer as this user: another user's task is not found (default: any task, as an operator)" },
    'call-id': { type: 'string', description: 'which question, when several subtasks wait (default: the oldest)' },
    json: { type: 'boolean', description: 'print the task as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const taskId = taskIdArg(positionals[0]);
    const bus = await ctx.bus();
    const req = {
      task_id: taskId,
      answer: positionals[1]!,
      ...(typeof values.user === 'string' ? { user_id: values.user } : {}),
      ...(typeof values['call-id'] === 'string' ? { call_id: values['call-id'] } : {}),
    };
    const view = await askService('dispatcher', () => request(bus, contracts.taskInput, req), {
      notFound: () => `task ${taskId} not found`,
      explainErrors: true,
    });
    writeLine(ctx.stdout, values.json === true ? JSON.stringify(view, null, 2) : formatTaskView(view));
    return EXIT.ok;
  },
};
