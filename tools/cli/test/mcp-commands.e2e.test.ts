import { Writable } from 'node:stream';
import { Bus, ReplyError, serve } from '@hermes/bus';
import { contracts, wireError, type ToolDebugCallRequest } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/index.js';

const logger = createLogger({ service: 'cli-mcp-test', level: 'silent' });
let natsUrl: string;
let bus: Bus;
const debugCalls: ToolDebugCallRequest[] = [];

beforeAll(async () => {
  natsUrl = (await startNatsServer()).url;
  bus = await Bus.connect({ servers: natsUrl, name: 'cli-mcp-test', logger });
  // A stand-in toolbus answering the debug and ops subjects.
  serve(bus, contracts.mcpStatus, async () => ({
    toolbus_id: 'toolbus-1',
    problems: [{ server: 'bad', field: 'url', message: 'server "bad": url: is not a valid URL' }],
    servers: [
      {
        name: 'everything',
        transport: 'stdio' as const,
        state: 'ready' as const,
        health: 'ok' as const,
        tools: ['everything_echo'],
        changed_tools: [],
        restarts: 1,
        config: {},
      },
    ],
    skipped_tools: [],
  }));
  serve(bus, contracts.mcpReload, async () => ({
    toolbus_id: 'toolbus-2',
    added: ['web'],
    removed: [],
    restarted: [],
    unchanged: ['everything'],
    problems: [{ server: 'bad', field: 'url', message: 'server "bad": url: is not a valid URL' }],
  }));
  serve(bus, contracts.mcpCall, async (req) => {
    if (req.server !== 'everything') throw new ReplyError(wireError('not_found', `there is no MCP server "${req.server}"`));
    return { result: { content: [{ type: 'text', text: `Echo: ${String(req.arguments.message)}` }] } };
  });
  serve(bus, contracts.toolDebugCall, async (req) => {
    debugCalls.push(req);
    return { call_id: 'dbg_1.debug.1.0', status: 'ok' as const, result: { result: 'ok' } };
  });
});

afterAll(async () => {
  await bus?.drain();
  await cleanupAll();
});

async function hermes(argv: string[]) {
  let out = '';
  let err = '';
  const sink = (append: (s: string) => void) => new Writable({ write: (chunk: Buffer, _e, done) => (append(chunk.toString()), done()) });
  const code = await runCli(argv, { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)), env: { NATS_URL: natsUrl } });
  return { code, out, err };
}

describe('hermes mcp and tools commands', () => {
  it('mcp status prints whose replica it shows, one line per server and the config problems', async () => {
    const { code, out } = await hermes(['mcp', 'status']);
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toBe('MCP servers of toolbus replica toolbus-1 (each replica runs its own; another may differ)');
    expect(out).toMatch(/everything\s+stdio\s+ready\s+ok\s+1\s+1/);
    expect(out).toContain('config problem: server "bad": url: is not a valid URL');
  });

  it('mcp reload says which replica reloaded, what changed, and fails on config problems', async () => {
    const { code, out, err } = await hermes(['mcp', 'reload']);
    expect(code).toBe(1);
    expect(out).toBe('reloaded on replica toolbus-2 (every other replica reloads too)\nadded: web\nremoved: -\nrestarted: -\nunchanged: everything\n');
    expect(err).toContain('config problem: server "bad": url: is not a valid URL');
  });

  it('mcp call prints the raw result, and names an unknown server', async () => {
    const ok = await hermes(['mcp', 'call', 'everything', 'echo', '{"message":"hi"}']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toEqual({ content: [{ type: 'text', text: 'Echo: hi' }] });
    const missing = await hermes(['mcp', 'call', 'nope', 'echo']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('there is no MCP server "nope"');
    expect((await hermes(['mcp', 'call', 'everything', 'echo', '[1]'])).code).toBe(2);
  });

  it('tools call sends the argument text and roles to the toolbus debug subject', async () => {
    const { code } = await hermes(['tools', 'call', 'web_add', '{"a":1', '--roles', 'ops,dev']);
    expect(code).toBe(0);
    expect(debugCalls.at(-1)).toEqual({ tool: 'web_add', arguments: '{"a":1', roles: ['ops', 'dev'] });
  });
});
