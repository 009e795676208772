import { microServiceStats, microServiceTotals, request } from '@hermes/bus';
import { contracts, type McpStatusReply, type ToolCallReply } from '@hermes/contracts';
import { EXIT, UsageError, stringOption, writeLine, type Command, type CommandContext } from './command.js';

import { askService } from './service-request.js';
import { formatTable } from './text-table.js';

const json = { json: { type: 'boolean', description: 'print the reply as JSON' } } as const;

/** Runs a toolbus request, turning "nobody answered" and wire errors into messages for people. */
const ask = <T>(fn: () => Promise<T>): Promise<T> => askService('toolbus', fn, { explainErrors: true });

function parseObject(text: string | undefined, what: string): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

function printJson(ctx: CommandContext, value: unknown): void {
  writeLine(ctx.stdout, JSON.stringify(value, null, 2));
}

function statusTable(s: McpStatusReply): string {
  // Each replica runs its own clients (and stdio children), so say whose view this is.
  const lines = [
    `MCP servers of toolbus replica ${s.toolbus_id} (each replica runs its own; another may differ)`,
    ...(s.config_file ? [`config ${s.config_file}${s.loaded_at ? ` (loaded ${s.loaded_at})` : ''}`] : []),
  ];
  const rows = s.servers.map((x) => [
    x.name,
    x.transport + (x.http_mode ? `/${x.http_mode}` : ''),
    x.state,
    x.health,
    String(x.restarts),
    String(x.tools.length),
    x.last_error ?? '-',
  ]);
  lines.push(formatTable([['SERVER', 'TRANSPORT', 'STATE', 'HEALTH', 'RESTARTS', 'TOOLS', 'LAST ERROR'], ...rows]));
  for (const x of s.servers)
    for (const c of x.changed_tools)
      lines.push(`changed: ${x.name} tool "${c.tool}" at ${c.detected_at}${c.held ? ' — hidden until `hermes mcp approve-change`' : ''}`);
  for (const p of s.problems) lines.push(`config problem: ${p.message}`);
  for (const k of s.skipped_tools) lines.push(`skipped: ${k.server} tool "${k.tool}": ${k.reason}`);
  return lines.join('\n');
}

/** `hermes mcp status`: the MCP servers of the one toolbus replica that answers. */
export const mcpStatusCommand: Command = {
  path: ['mcp', 'status'],
  summary: 'state, health and tools of the MCP servers (of the toolbus replica that answers)',
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: json,
  async execute({ values }, ctx) {
    const bus = await ctx.bus();
    const s = await ask(() => request(bus, contracts.mcpStatus, {}));
    if (values.json === true) printJson(ctx, s);
    else writeLine(ctx.stdout, statusTable(s));
    return EXIT.ok;
  },
};

/** `hermes mcp reload`: every toolbus replica re-reads the MCP config file. */
export const mcpReloadCommand: Command = {
  path: ['mcp', 'reload'],
  summary: 're-read the MCP config file (every toolbus replica)',
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: json,
  async execute({ values }, ctx) {
    const bus = await ctx.bus();
    const r = await ask(() => request(bus, contracts.mcpReload, {}, { timeoutMs: 30_000 }));
    if (values.json === true) printJson(ctx, r);
    else {
      const list = (xs: string[]) => (xs.length ? xs.join(', ') : '-');
      writeLine(ctx.stdout, `reloaded on replica ${r.toolbus_id} (every other replica reloads too)`);
      writeLine(ctx.stdout, `added: ${list(r.added)}\nremoved: ${list(r.removed)}\nrestarted: ${list(r.restarted)}\nunchanged: ${list(r.unchanged)}`);
      for (const p of r.problems) writeLine(ctx.stderr, `config problem: ${p.message}`);
    }
    return r.problems.length ? EXIT.failed : EXIT.ok;
  },
};

/** `hermes mcp call <server> <tool> '<json>'`: straight to the MCP server, bypassing the ToolBus. */
export const mcpCallCommand: Command = {
  path: ['mcp', 'call'],
  summary: "call an MCP server's tool directly (no validation, permissions or records)",
  args: "<server> <tool> ['<json>']",
  minArgs: 2,
  maxArgs: 3,
  options: { timeout: { type: 'string', valueName: 'ms', description: 'how long to wait (default 30000)' } },
  async execute({ values, positionals }, ctx) {
    const [server = '', tool = '', args] = positionals;
    const timeout = stringOption(values, 'timeout');
    const timeoutMs = timeout === undefined ? 30_000 : Number(timeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new UsageError('--timeout must be a positive integer (ms)');
    const bus = await ctx.bus();
    const r = await ask(() =>
      request(bus, contracts.mcpCall, { server, tool, arguments: parseObject(args, 'the arguments'), timeout_ms: timeoutMs }, { timeoutMs: timeoutMs + 5000 }),
    );
    printJson(ctx, r.result);
    return r.result.isError === true ? EXIT.failed : EXIT.ok;
  },
};

/** `hermes mcp resources <server>`: list resources, templates and prompts, or read one. */
export const mcpResourcesCommand: Command = {
  path: ['mcp', 'resources'],
  summary: "list an MCP server's resources and prompts, or --read <uri> / --prompt <name>",
  args: '<server>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    read: { type: 'string', valueName: 'uri', description: 'read this resource' },
    prompt: { type: 'string', valueName: 'name', description: 'get this prompt' },
    args: { type: 'string', valueName: 'json', description: "the prompt's arguments, a JSON object of strings" },
  },
  async execute({ values, positionals }, ctx) {
    const [server = ''] = positionals;
    const read = stringOption(values, 'read');
    const prompt = stringOption(values, 'prompt');
    const promptArgs = parseObject(stringOption(values, 'args'), '--args') as Record<string, string>;
    const bus = await ctx.bus();
    const r = await ask(() =>
      request(bus, contracts.mcpResources, { server, ...(read ? { read } : {}), ...(prompt ? { prompt, prompt_arguments: promptArgs } : {}) }),
    );
    printJson(ctx, r);
    return EXIT.ok;
  },
};

/** `hermes mcp approve-change <server> [tool]`: offer changed tools again (rug-pull defence). */
export const mcpApproveChangeCommand: Command = {
  path: ['mcp', 'approve-change'],
  summary: 'accept the changed description/schema of MCP tools, or the relaxed policy of a provider’s tools, so they are offered again',
  args: '<server-or-provider> [tool]',
  minArgs: 1,
  maxArgs: 2,
  options: {},
  async execute({ positionals }, ctx) {
    const [server = '', tool] = positionals;
    const bus = await ctx.bus();
    const r = await ask(() => request(bus, contracts.mcpApproveChange, { server, ...(tool ? { tool } : {}) }));
    writeLine(ctx.stdout, r.approved.length ? `approved on ${r.toolbus_id}: ${r.approved.join(', ')}` : 'nothing to approve');
    return EXIT.ok;
  },
};

/** `hermes tools list`: the tools a caller with these roles may use. */
export const toolsListCommand: Command = {
  path: ['tools', 'list'],
  summary: 'the tools on offer (built-in, MCP, providers) for --roles',
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: { roles: { type: 'string', valueName: 'a,b', description: 'the caller\'s roles (default "admin")' }, ...json },
  async execute({ values }, ctx) {
    const roles = (stringOption(values, 'roles') ?? 'admin').split(',').filter(Boolean);
    const bus = await ctx.bus();
    const r = await ask(() => request(bus, contracts.toolsList, { roles }));
    // Providers that are NATS micro services report their own counters: shown per instance.
    const services = await microServiceStats(bus);
    if (values.json === true) printJson(ctx, { tools: r.tools, services });
    else {
      const width = Math.max(4, ...r.tools.map((t) => t.name.length));
      for (const t of r.tools) writeLine(ctx.stdout, `${t.name.padEnd(width)}  ${t.description.split('\n')[0]!.slice(0, 100)}`);
      if (services.length) {
        writeLine(ctx.stdout, '');
        writeLine(ctx.stdout, 'services ($SRV.STATS):');
        for (const s of services) {
          const { requests, errors } = microServiceTotals(s);
          writeLine(ctx.stdout, `${s.name} ${s.version}  id=${s.id}  requests=${requests}  errors=${errors}`);
        }
      }
    }
    return EXIT.ok;
  },
};

/** `hermes tools call <name> '<json>'`: one call through the whole ToolBus path under a debug task. */
export const toolsCallCommand: Command = {
  path: ['tools', 'call'],
  summary: 'call a tool through the ToolBus (validation, permissions, audit) as a debug task',
  args: "<name> ['<json>']",
  minArgs: 1,
  maxArgs: 2,
  options: {
    roles: { type: 'string', valueName: 'a,b', description: 'the caller\'s roles (default "admin")' },
    user: { type: 'string', valueName: 'id', description: 'the caller (default "debug")' },
  },
  async execute({ values, positionals }, ctx) {
    const [tool = '', args = '{}'] = positionals;
    const roles = stringOption(values, 'roles')?.split(',').filter(Boolean);
    const user = stringOption(values, 'user');
    const bus = await ctx.bus();
    const reply: ToolCallReply = await ask(() =>
      request(bus, contracts.toolDebugCall, { tool, arguments: args, ...(roles ? { roles } : {}), ...(user ? { user_id: user } : {}) }, { timeoutMs: 120_000 }),
    );
    printJson(ctx, reply);
    return reply.status === 'ok' ? EXIT.ok : EXIT.failed;
  },
};

/** The `tools` and `mcp` rows of the command table. */
export const MCP_COMMANDS: readonly Command[] = [
  toolsListCommand,
  toolsCallCommand,
  mcpStatusCommand,
  mcpReloadCommand,
  mcpCallCommand,
  mcpResourcesCommand,
  mcpApproveChangeCommand,
];
