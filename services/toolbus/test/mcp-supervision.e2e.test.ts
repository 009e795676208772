import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import { callRequest, callTool, freshPrefix } from './helpers.js';
import { serverStatus, startMcpRig, toolNames, waitFor, type McpTestRig } from './mcp-helpers.js';
import { startTestMcpSseServer, type TestMcpSseServer } from './mcp-sse-test-server.js';

// The HTTP+SSE fallback, reconnecting an HTTP server, the rug-pull check on a schema change, and
// the back-off of a stdio server that keeps crashing — each against a real server.

const TOKEN = 'Bearer sse-secret-token';
const MAX_BACKOFF_MS = 1500;

let rig: McpTestRig;
const spawnLog = join(tmpdir(), `${freshPrefix()}-spawns.log`);
let sse: TestMcpSseServer;
/** Answers 404 to everything: neither Streamable HTTP nor HTTP+SSE. */
let nowhere: Server;
let servers: Record<string, unknown>;
let bus: Bus;

/**
 * A stdio "server" that notes the time (ms) it was started, complains on stderr and exits at once,
 * before answering `initialize`. A shell, not node: it starts in a few ms even on a loaded machine, so the gaps
 * between starts are the toolbus's back-off and little else.
 */
const crashingServer = (log: string) => ({
  transport: 'stdio',
  command: '/bin/sh',
  args: ['-c', 'date +%s%3N >> "$0"; echo "crashy: no config found" >&2; exit 3', log],
});

const call = (tool: string, args: unknown) => callTool(bus, callRequest({ tool, arguments: JSON.stringify(args), roles: ['admin'] }), 20_000);

beforeAll(async () => {
  process.env.HERMES_TEST_SSE_TOKEN = TOKEN;
  sse = await startTestMcpSseServer({ token: TOKEN });
  nowhere = createServer((_req, res) => void res.writeHead(404).end('no such endpoint'));
  await new Promise<void>((resolve) => nowhere.listen(0, '127.0.0.1', resolve));
  servers = {
    sse: { transport: 'http', url: sse.url, headers: { authorization: '${HERMES_TEST_SSE_TOKEN}' }, pin_tools: true },
    nowhere: { transport: 'http', url: `http://127.0.0.1:${(nowhere.address() as AddressInfo).port}/mcp` },
  };
  rig = await startMcpRig({
    fileName: 'mcp.json',
    servers,
    settings: { MCP_CONFIG_WATCH: false, MCP_HEALTH_INTERVAL_MS: 250, MCP_RECONNECT_MAX_MS: MAX_BACKOFF_MS },
  });
  bus = rig.bus;
}, 30_000);

afterAll(async () => {
  await rig?.stop();
  await sse?.stop().catch(() => undefined);
  nowhere?.closeAllConnections();
  nowhere?.close();
  rmSync(spawnLog, { force: true });
});

describe('MCP supervision', () => {
  it('falls back to the HTTP+SSE transport when the server refuses Streamable HTTP, sending the configured headers', async () => {
    await waitFor('sse_multiply', async () => (await toolNames(bus)).includes('sse_multiply'));
    expect(await serverStatus(bus, 'sse')).toMatchObject({
      state: 'ready',
      transport: 'http',
      http_mode: 'sse',
      server_info: { name: 'hermes-sse-test-server' },
    });
    // Streamable HTTP first (a POST to the URL, refused), then the SSE stream; never an auth failure.
    const firstStream = sse.requests.indexOf('GET /sse (stream)');
    expect(sse.requests.slice(0, firstStream)).toContain('POST /sse 405');
    expect(sse.requests.some((r) => r.endsWith(' 401'))).toBe(false);
    expect(await call('sse_multiply', { a: 6, b: 7 })).toMatchObject({ status: 'ok', result: { result: '42' } });
  });

  it('names both transports’ failures when a server answers neither', async () => {
    const s = await waitFor('nowhere failed', async () => {
      const x = await serverStatus(bus, 'nowhere');
      return x?.last_error ? x : undefined;
    });
    expect(s.state).toBe('reconnecting');
    expect(s.last_error).toMatch(/^Streamable HTTP refused with HTTP 404 \(.*no such endpoint\); the SSE transport failed too: .*404/);
  });

  it('holds back a tool whose schema changed on a pinned server, and offers it again when it changes back', async () => {
    sse.changeMultiplySchema(true);
    const held = await waitFor('schema change held', async () => {
      const s = await serverStatus(bus, 'sse');
      return s?.changed_tools.some((c) => c.tool === 'multiply' && c.held) ? s : undefined;
    });
    expect(held.state).toBe('ready');
    expect(await toolNames(bus)).not.toContain('sse_multiply');
    expect((await call('sse_multiply', { a: 1, b: 1 })).error?.code).toBe('tool_not_found');
    // Back to the version first seen: nothing left to approve.
    sse.changeMultiplySchema(false);
    await waitFor('sse_multiply again', async () => (await toolNames(bus)).includes('sse_multiply'));
    expect((await serverStatus(bus, 'sse'))?.changed_tools).toEqual([]);
  });

  it('withdraws the tools of an HTTP server that goes away and reconnects when it is back', async () => {
    const before = (await serverStatus(bus, 'sse'))!;
    await sse.stop();
    const down = await waitFor('sse withdrawn', async () => {
      const s = await serverStatus(bus, 'sse');
      return s?.state === 'reconnecting' ? s : undefined;
    });
    expect(down).toMatchObject({ health: 'failing', tools: [], last_error: expect.any(String) });
    expect(await toolNames(bus)).not.toContain('sse_multiply');
    // Known but away: retryable, and the model is told why, not that the tool does not exist.
    expect(await call('sse_multiply', { a: 2, b: 2 })).toMatchObject({
      status: 'error',
      error: { code: 'provider_unavailable', retryable: true, message: expect.stringContaining('MCP server "sse" is reconnecting') },
    });
    expect((await call('sse_no_such_tool', {})).error?.code).toBe('tool_not_found');
    await sse.start();
    const back = await waitFor('sse ready again', async () => {
      const s = await serverStatus(bus, 'sse');
      return s?.state === 'ready' ? s : undefined;
    });
    expect(back.restarts).toBeGreaterThan(before.restarts);
    expect(back.http_mode).toBe('sse');
    expect(await call('sse_multiply', { a: 3, b: 5 })).toMatchObject({ status: 'ok', result: { result: '15' } });
  });

  it('starts a stdio server in the cwd its config names', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'hermes-mcp-cwd-'));
    const seen = join(workDir, 'pwd.txt');
    try {
      // It only writes where it runs, then exits: enough to see the directory it was started in.
      rig.writeConfig({ ...servers, placed: { transport: 'stdio', command: '/bin/sh', args: ['-c', 'pwd > pwd.txt; exit 3'], cwd: workDir } });
      expect((await request(bus, contracts.mcpReload, {})).added).toEqual(['placed']);
      const written = await waitFor('the server to start', async () => (existsSync(seen) ? readFileSync(seen, 'utf8').trim() : undefined));
      expect(realpathSync(written)).toBe(realpathSync(workDir));
    } finally {
      rig.writeConfig(servers);
      expect((await request(bus, contracts.mcpReload, {})).removed).toEqual(['placed']);
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('restarts a stdio server that keeps crashing with growing back-off, capped at MCP_RECONNECT_MAX_MS', async () => {
    // Added now, not at start-up, so its first retries are not slowed by everything else starting.
    rig.writeConfig({ ...servers, crashy: crashingServer(spawnLog) });
    expect((await request(bus, contracts.mcpReload, {})).added).toEqual(['crashy']);
    const spawns = await waitFor('seven starts', async () => {
      const times = existsSync(spawnLog) ? readFileSync(spawnLog, 'utf8').trim().split('\n').map(Number) : [];
      return times.length >= 7 ? times : undefined;
    });
    const gaps = spawns.slice(1).map((t, i) => t - spawns[i]!);
    // From 250 ms, doubling, with jitter (each delay between half and all of its step): 125–250,
    // 250–500, 500–1000, then 750–1500 for good — uncapped, the sixth would be 4000–8000. Each gap
    // also holds a failed start (some 100–300 ms here), so the bounds leave room for that.
    expect(gaps[3]!).toBeGreaterThan(gaps[0]!);
    expect(gaps[4]!).toBeGreaterThan(gaps[0]!);
    for (const gap of gaps.slice(2)) expect(gap).toBeGreaterThanOrEqual(500);
    for (const gap of gaps.slice(3)) expect(gap).toBeLessThan(MAX_BACKOFF_MS * 2);
    const crashy = (await serverStatus(bus, 'crashy'))!;
    // Why it failed is in the status, with the child's last stderr lines.
    expect(crashy).toMatchObject({ state: 'reconnecting', tools: [], last_error: expect.stringContaining('crashy: no config found') });
    // One crashing server takes nothing from the others.
    expect(await toolNames(bus)).toContain('sse_multiply');
  });
});
