import { request } from '@hermes/bus';
import { Id, MemoryStatus, contracts, provenanceLabel, teamField, validate, type LongTermMemory } from '@hermes/contracts';
import { EXIT, TEAM_OPTION, UsageError, stringOption, teamOption, writeLine, type Command, type CommandContext, type OptionValues } from './command.js';
import { formatTable } from './text-table.js';

const JSON_OPTION = { json: { type: 'boolean', description: 'print the reply as JSON' } } as const;

function userArg(raw: string | undefined): string {
  if (!validate(Id, raw ?? '').ok) throw new UsageError(`"${raw ?? ''}" is not a user id`);
  return raw!;
}

function numberOption(values: OptionValues, name: string, check: (n: number) => boolean, expected: string): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !check(n)) throw new UsageError(`--${name} must be ${expected}`);
  return n;
}

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function memoryTable(memories: readonly LongTermMemory[]): string {
  const rows = memories.map((m) => [
    m.memory_id,
    m.type,
    m.status,
    m.confidence.toFixed(2),
    m.created_at.slice(0, 10),
    m.last_recalled_at?.slice(0, 10) ?? '-',
    provenanceLabel(m.provenance),
    clip(m.content),
  ]);
  return formatTable([['ID', 'TYPE', 'STATUS', 'CONF', 'CREATED', 'RECALLED', 'FROM', 'CONTENT'], ...rows]);
}

function print(ctx: CommandContext, values: OptionValues, reply: unknown, text: () => string): number {
  writeLine(ctx.stdout, values.json === true ? JSON.stringify(reply, null, 2) : text());
  return EXIT.ok;
}

/** `hermes memory list <user>`: a user's long-term memories, newest first. */
export const memoryListCommand: Command = {
  path: ['memory', 'list'],
  summary: "list a user's long-term memories (debugging)",
  args: '<user>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    ...TEAM_OPTION,
    status: { type: 'string', valueName: 'status', description: 'only active, superseded, archived or deleted ones' },
    limit: { type: 'string', valueName: 'n', description: 'at most this many (default 100)' },
    ...JSON_OPTION,
  },
  async execute({ values, positionals }, ctx) {
    const userId = userArg(positionals[0]);
    const status = stringOption(values, 'status');
    if (status !== undefined && !validate(MemoryStatus, status).ok) throw new UsageError('--status must be active, superseded, archived or deleted');
    const limit = numberOption(values, 'limit', (n) => Number.isInteger(n) && n >= 1 && n <= 1000, 'a whole number from 1 to 1000');
    const reply = await request(await ctx.bus(), contracts.memoryList, {
      user_id: userId,
      ...teamField(teamOption(values, ctx.env)),
      ...(status !== undefined ? { status: status as MemoryStatus } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    return print(ctx, values, reply, () => (reply.memories.length === 0 ? `no memories for ${userId}` : memoryTable(reply.memories)));
  },
};

/** `hermes memory recall <user> "<query>"`: what recall would put in a prompt, with scores. */
export const memoryRecallCommand: Command = {
  path: ['memory', 'recall'],
  summary: 'recall memories for a query, with scores and the background block (debugging)',
  args: '<user> "<query>"',
  minArgs: 2,
  maxArgs: 2,
  options: {
    ...TEAM_OPTION,
    k: { type: 'string', valueName: 'n', description: 'at most this many memories (default 5)' },
    'min-score': { type: 'string', valueName: 'x', description: 'minimum score, 0 to 1 (default: the service setting, 0.35)' },
    ...JSON_OPTION,
  },
  async execute({ values, positionals }, ctx) {
    const userId = userArg(positionals[0]);
    const query = positionals[1] ?? '';
    if (query.trim() === '') throw new UsageError('the query is empty');
    const k = numberOption(values, 'k', (n) => Number.isInteger(n) && n >= 1 && n <= 50, 'a whole number from 1 to 50');
    const minScore = numberOption(values, 'min-score', (n) => n >= 0 && n <= 1, 'a number from 0 to 1');
    // Recall stamps last_recalled_at, so debugging with it also keeps those memories from archival.
    const reply = await request(await ctx.bus(), contracts.memoryRecall, {
      user_id: userId,
      ...teamField(teamOption(values, ctx.env)),
      query,
      ...(k !== undefined ? { k } : {}),
      ...(minScore !== undefined ? { min_score: minScore } : {}),
    });
    return print(ctx, values, reply, () => {
      if (reply.memories.length === 0) return `nothing recalled for ${userId}`;
      const rows = reply.memories.map((m) => [
        m.score.toFixed(3),
        m.similarity.toFixed(3),
        m.memory.memory_id,
        provenanceLabel(m.memory.provenance),
        clip(m.memory.content),
      ]);
      return `${formatTable([['SCORE', 'SIMILARITY', 'ID', 'FROM', 'CONTENT'], ...rows])}\n\n${reply.background}`;
    });
  },
};

/** `hermes memory forget <user> [memory-id]`: removes every memory and session of the user, or one memory. */
export const memoryForgetCommand: Command = {
  path: ['memory', 'forget'],
  summary: 'forget a user (every long-term memory and session of theirs), or one of their memories',
  args: '<user> [memory-id]',
  minArgs: 1,
  maxArgs: 2,
  options: { ...TEAM_OPTION, ...JSON_OPTION },
  async execute({ values, positionals }, ctx) {
    const userId = userArg(positionals[0]);
    const memoryId = positionals[1];
    const team = teamField(teamOption(values, ctx.env));
    if (memoryId !== undefined) {
      const reply = await request(await ctx.bus(), contracts.memoryForgetOne, { user_id: userId, ...team, memory_id: memoryId });
      return print(ctx, values, reply, () => `forgot memory ${reply.memory_id} of ${userId}`);
    }
    const reply = await request(await ctx.bus(), contracts.memoryForget, { user_id: userId, ...team }, { timeoutMs: 60_000 });
    return print(ctx, values, reply, () => `forgot ${userId}: ${reply.memories_removed} memories and ${reply.sessions_removed} sessions removed`);
  },
};

/** `hermes memory restore <user> [memory_id]`: brings archived memories back into recall. */
export const memoryRestoreCommand: Command = {
  path: ['memory', 'restore'],
  summary: "bring a user's archived memories (all, or one) back into recall",
  args: '<user> [memory-id]',
  minArgs: 1,
  maxArgs: 2,
  options: { ...TEAM_OPTION, ...JSON_OPTION },
  async execute({ values, positionals }, ctx) {
    const userId = userArg(positionals[0]);
    const memoryId = positionals[1];
    const reply = await request(await ctx.bus(), contracts.memoryRestore, {
      user_id: userId,
      ...teamField(teamOption(values, ctx.env)),
      ...(memoryId !== undefined ? { memory_id: memoryId } : {}),
    });
    return print(ctx, values, reply, () =>
      reply.restored.length === 0 ? `no archived memories for ${userId}` : `restored ${reply.restored.length}:\n${memoryTable(reply.restored)}`,
    );
  },
};

export const MEMORY_COMMANDS: readonly Command[] = [memoryListCommand, memoryRecallCommand, memoryForgetCommand, memoryRestoreCommand];
