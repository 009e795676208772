import { request } from '@hermes/bus';
import { ApprovalDecision, Id, contracts, validate } from '@hermes/contracts';
import { EXIT, UsageError, stringOption, taskIdArg, writeLine, type Command } from './command.js';
import { askService } from './service-request.js';

const MAX_REASON_CHARS = 2000;

/** `hermes approve <task-id> <call-id>`: approve (or with --deny, deny) a tool call parked for approval. */
export const approveCommand: Command = {
  path: ['approve'],
  summary: 'approve (or --deny) a tool call that waits for approval',
  args: '<task-id> <call-id>',
  minArgs: 2,
  maxArgs: 2,
  options: {
    deny: { type: 'boolean', description: 'deny the call instead of approving it' },
    reason: { type: 'string', valueName: 'text', description: 'why, kept in the audit record' },
    user: { type: 'string', valueName: 'id', description: 'who decides (default: $HERMES_USER; one of them is required)' },
    json: { type: 'boolean', description: 'print the toolbus reply as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const taskId = taskIdArg(positionals[0]);
    const callId = positionals[1] ?? '';
    if (!validate(ApprovalDecision.properties.call_id, callId).ok) throw new UsageError('the call id must not be empty');
    // The decider is written into the audit trail, so it is never guessed.
    const decidedBy = stringOption(values, 'user') ?? ctx.env.HERMES_USER;
    if (decidedBy === undefined || decidedBy === '') throw new UsageError('say who decides: --user <id> or HERMES_USER');
    if (!validate(Id, decidedBy).ok) throw new UsageError(`--user must be 1-128 characters of letters, digits, _ : @ - (got "${decidedBy}")`);
    const reason = stringOption(values, 'reason');
    if (reason !== undefined && reason.length > MAX_REASON_CHARS) throw new UsageError(`--reason is longer than ${MAX_REASON_CHARS} characters`);
    const decision = values.deny === true ? 'deny' : 'approve';

    const bus = await ctx.bus();
    const reply = await askService(
      'toolbus',
      () =>
        request(bus, contracts.toolApprovalDecide, {
          task_id: taskId,
          call_id: callId,
          decision,
          decided_by: decidedBy,
          ...(reason !== undefined ? { reason } : {}),
        }),
      { notFound: (message) => `no call ${callId} of task ${taskId} waits for approval: ${message}` },
    );
    writeLine(ctx.stdout, values.json === true ? JSON.stringify(reply) : `${reply.status} call ${reply.call_id} of task ${taskId}`);
    return EXIT.ok;
  },
};
