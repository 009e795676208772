import { request } from '@hermes/bus';
import { Id, SessionListRequest, contracts, teamField, validate } from '@hermes/contracts';
import { CliError, EXIT, TEAM_OPTION, UsageError, stringOption, teamOption, writeLine, type Command } from './command.js';
import { askService } from './service-request.js';
import { formatTable } from './text-table.js';

/** `hermes session summarize <session> --user <id>`: fold the session's older messages into its summary now. */
export const sessionSummarizeCommand: Command = {
  path: ['session', 'summarize'],
  summary: "update a session's running summary now",
  args: '<session-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    ...TEAM_OPTION,
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
      { user_id: userId, ...teamField(teamOption(values, ctx.env)), session_id: sessionId, ...(keepRecent !== undefined ? { keep_recent: keepRecent } : {}) },
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

/** A positional id (user or session), checked before anything is sent. */
function idArg(value: string | undefined, what: 'user' | 'session'): string {
  const id = value ?? '';
  if (!validate(Id, id).ok) throw new UsageError(`"${id}" is not a ${what} id`);
  return id;
}

/** `hermes session list <user>`: a user's sessions, most recently written first. */
export const sessionListCommand: Command = {
  path: ['session', 'list'],
  summary: "list a user's sessions, most recently written first",
  args: '<user-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    ...TEAM_OPTION,
    limit: { type: 'string', valueName: 'n', description: 'at most n sessions (default 50)' },
    cursor: { type: 'string', valueName: 'cursor', description: 'the next page, as printed after a full page' },
    json: { type: 'boolean', description: 'print the reply as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const userId = idArg(positionals[0], 'user');
    const limit = stringOption(values, 'limit');
    const cursor = stringOption(values, 'cursor');
    const checked = validate(SessionListRequest, {
      user_id: userId,
      ...teamField(teamOption(values, ctx.env)),
      ...(limit ? { limit: Number(limit) } : {}),
      ...(cursor ? { cursor } : {}),
    });
    if (!checked.ok) throw new UsageError(`invalid options: ${checked.issues.map((i) => `${i.path} ${i.message}`).join('; ')}`);
    const bus = await ctx.bus();
    const reply = await askService('memory', () => request(bus, contracts.sessionList, checked.value), { explainErrors: true });
    if (values.json === true) {
      writeLine(ctx.stdout, JSON.stringify(reply, null, 2));
      return EXIT.ok;
    }
    const rows = reply.sessions.map((s) => [s.session_id, String(s.message_count), String(s.tokens), s.created_at, s.updated_at, s.locked ? 'locked' : '']);
    writeLine(ctx.stdout, formatTable([['SESSION', 'MESSAGES', 'TOKENS', 'CREATED', 'UPDATED', ''], ...rows]));
    if (reply.next_cursor) writeLine(ctx.stdout, `more: hermes session list ${userId} --cursor ${reply.next_cursor}`);
    return EXIT.ok;
  },
};

/** `hermes session show <user> <session>`: the session's latest messages. */
export const sessionShowCommand: Command = {
  path: ['session', 'show'],
  summary: "print a session's latest messages",
  args: '<user-id> <session-id>',
  minArgs: 2,
  maxArgs: 2,
  options: {
    ...TEAM_OPTION,
    limit: { type: 'string', valueName: 'n', description: 'the latest n messages (default 50, at most 1000)' },
    json: { type: 'boolean', description: 'print the messages as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const userId = idArg(positionals[0], 'user');
    const sessionId = idArg(positionals[1], 'session');
    const rawLimit = stringOption(values, 'limit');
    const limit = rawLimit === undefined ? undefined : Number(rawLimit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 1000)) throw new UsageError('--limit must be a whole number from 1 to 1000');
    const bus = await ctx.bus();
    const reply = await askService(
      'memory',
      () =>
        request(bus, contracts.sessionRead, { user_id: userId, ...teamField(teamOption(values, ctx.env)), session_id: sessionId, ...(limit ? { limit } : {}) }),
      { explainErrors: true },
    );
    if (values.json === true) {
      writeLine(ctx.stdout, JSON.stringify(reply.messages, null, 2));
      return EXIT.ok;
    }
    for (const m of reply.messages) {
      const calls = (m.tool_calls ?? []).map((c) => ` → ${c.name}(${c.arguments})`).join('');
      writeLine(ctx.stdout, `${m.created_at}  ${m.role.padEnd(9)}  ${m.content ?? ''}${calls}`);
    }
    return EXIT.ok;
  },
};

/** `hermes session delete <user> <session>`: delete a session with everything stored for it. */
export const sessionDeleteCommand: Command = {
  path: ['session', 'delete'],
  summary: 'delete a session (messages, full tool results, summary, pins)',
  args: '<user-id> <session-id>',
  minArgs: 2,
  maxArgs: 2,
  options: { ...TEAM_OPTION },
  async execute({ values, positionals }, ctx) {
    const userId = idArg(positionals[0], 'user');
    const sessionId = idArg(positionals[1], 'session');
    const team = teamOption(values, ctx.env);
    const bus = await ctx.bus();
    const reply = await askService('memory', () => request(bus, contracts.sessionDelete, { user_id: userId, ...teamField(team), session_id: sessionId }), {
      explainErrors: true,
    });
    if (!reply.deleted) throw new CliError(`no session ${sessionId} of user ${userId}`, EXIT.failed);
    writeLine(ctx.stdout, `deleted session ${sessionId} (${reply.messages} messages)`);
    return EXIT.ok;
  },
};
