import { request } from '@hermes/bus';
import { Id, contracts, validate } from '@hermes/contracts';
import { EXIT, UsageError, stringOption, writeLine, type Command } from './command.js';

/** `hermes session summarize <session> --user <id>`: fold the session's older messages into its summary now. */
export const sessionSummarizeCommand: Command = {
  path: ['session', 'summarize'],
  summary: "update a session's running summary now",
  args: '<session-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    user: { type: 'string', valueName: 'id', description: 'user who owns the session (default: $HERMES_USER or cli-user)' },
    'keep-recent': { type: 'string', valueName: 'n', description: 'latest messages to leave out of the summary (default: the service setting)' },
    json: { type: 'boolean', description: 'print the reply as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const sessionId = positionals[0] ?? '';
    if (!validate(Id, sessionId).ok) throw new UsageError(`"${sessionId}" is not a session id`);
    const userId = stringOption(values, 'user') ?? ctx.env.HERMES_USER ?? 'cli-user';
    if (!validate(Id, userId).ok) throw new UsageError(`"${userId}" is not a user id`);
    const keepRaw = stringOption(values, 'keep-recent');
    const keepRecent = keepRaw === undefined ? undefined : Number(keepRaw);
    if (keepRecent !== undefined && (!Number.isInteger(keepRecent) || keepRecent < 0)) throw new UsageError('--keep-recent must be a whole number, 0 or more');
    const bus = await ctx.bus();
    // A summary is an LLM call that may wait for a permit: allow it far longer than a plain request.
    const reply = await request(
      bus,
      contracts.sessionSummarize,
      { user_id: userId, session_id: sessionId, ...(keepRecent !== undefined ? { keep_recent: keepRecent } : {}) },
      { timeoutMs: 180_000 },
    );
    if (values.json === true) {
      writeLine(ctx.stdout, JSON.stringify(reply, null, 2));
    } else {
      writeLine(ctx.stdout, `folded ${reply.folded_messages} messages; the summary covers ${reply.covered_messages}; ${reply.pins_added} facts pinned`);
      if (reply.summary !== null) writeLine(ctx.stdout, `\n${reply.summary}`);
    }
    return EXIT.ok;
  },
};
