import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { callRequest, callTool } from './helpers.js';
import { everythingBin, mcpStatus, serverStatus, startMcpRig, toolNames, waitFor, type McpTestRig } from './mcp-helpers.js';
import { startTestMcpHttpServer, type TestMcpHttpServer } from './mcp-test-server.js';

// The config's policy on MCP tools (roles, require_confirm, timeout_ms, per server and per tool;
// disabled_tools) and secrets from the environment, which must never reach the logs or the status.

const SECRETS = { HERMES_TEST_POLICY_TOKEN: 'tok-4f1c9e0b', HERMES_TEST_POLICY_KEY: 'key-77ab20d4', HERMES_TEST_POLICY_ENV: 'env-0c3d51aa' };

let rig: McpTestRig;
let bus: Bus;
let web: TestMcpHttpServer;
/** Refuses everything with 401, so connection errors get logged. */
let refusing: Server;
const logLines: string[] = [];

const call = (tool: string, args: unknown, roles: string[]) => callTool(bus, callRequest({ tool, arguments: JSON.stringify(args), roles }), 20_000);

beforeAll(async () => {
  Object.assign(process.env, SECRETS);
  web = await startTestMcpHttpServer();
  refusing = createServer((_req, res) => void res.writeHead(401).end('unauthorized'));
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  const auth = { authorization: 'Bearer ${HERMES_TEST_POLICY_TOKEN}', 'x-api-key': '${HERMES_TEST_POLICY_KEY}' };
  rig = await startMcpRig({
    servers: {
      everything: {
        transport: 'stdio',
        command: process.execPath,
        args: [everythingBin, 'stdio'],
        env: { API_KEY: '${HERMES_TEST_POLICY_ENV}' },
        // get-env would hand the child's environment (API_KEY) to the model.
        disabled_tools: ['get-env'],
        roles: ['ops'],
        timeout_ms: 800,
        tools: { echo: { roles: ['ops', 'member'] }, 'get-sum': { require_confirm: true } },
      },
      web: { transport: 'http', url: web.url, headers: auth },
      refusing: { transport: 'http', url: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/mcp`, headers: auth },
    },
    settings: { MCP_CONFIG_WATCH: false, MCP_RECONNECT_MAX_MS: 500, MCP_DESCRIPTION_MAX_CHARS: 64 },
    logger: createLogger({ service: 'toolbus-test', level: 'debug', destination: { write: (line: string) => void logLines.push(line) } }),
  });
  bus = rig.bus;
  // Approval requests are events on the task's stream.
  await bus.ensureStreams(['taskEvents']);
  await waitFor('everything and web ready', async () => (await mcpStatus(bus)).servers.filter((s) => s.state === 'ready').length === 2, 20_000);
}, 30_000);

afterAll(async () => {
  await rig?.stop();
  await web?.close();
  refusing?.closeAllConnections();
  refusing?.close();
});

describe('MCP tool policy and secrets', () => {
  it('offers each caller what the server roles and per-tool overrides allow, without disabled_tools', async () => {
    const member = (await toolNames(bus, ['member'])).filter((n) => n.startsWith('everything_'));
    expect(member).toEqual(['everything_echo']);
    const ops = await toolNames(bus, ['ops']);
    expect(ops).toEqual(expect.arrayContaining(['everything_echo', 'everything_get-sum', 'everything_trigger-long-running-operation', 'web_add']));
    expect(ops).not.toContain('everything_get-env');
    // A server without roles is open to every caller.
    expect(await toolNames(bus, ['member'])).toContain('web_add');
  });

  it('cuts server descriptions (untrusted) to MCP_DESCRIPTION_MAX_CHARS and says where each tool comes from', async () => {
    const tools = (await request(bus, contracts.toolsList, { roles: ['ops'] })).tools.filter((t) => t.name.startsWith('everything_'));
    for (const t of tools) expect(t.description).toMatch(/^[^]{0,64}…? \(MCP server "everything", tool "[a-z-]+"\)$/);
    // A long one is cut; a short one is kept whole.
    const gzip = 'Compresses a single file using gzip compression. Depending upon the selected output type';
    expect(tools.find((t) => t.name === 'everything_gzip-file-as-resource')?.description).toBe(
      `${gzip.slice(0, 64)}… (MCP server "everything", tool "gzip-file-as-resource")`,
    );
    expect(tools.find((t) => t.name === 'everything_echo')?.description).toBe('Echoes back the input string (MCP server "everything", tool "echo")');
  });

  it('refuses a caller without the role, and holds a require_confirm tool for approval', async () => {
    expect(await call('everything_get-sum', { a: 1, b: 2 }, ['member'])).toMatchObject({ status: 'error', error: { code: 'tool_forbidden' } });
    expect(await call('everything_echo', { message: 'hi' }, ['member'])).toMatchObject({ status: 'ok', result: { result: 'Echo: hi' } });
    expect((await call('everything_get-sum', { a: 1, b: 2 }, ['ops'])).status).toBe('pending_approval');
  });

  it('ends a call that outlasts the server’s timeout_ms with tool_timeout, and the server keeps working', async () => {
    const started = Date.now();
    const reply = await call('everything_trigger-long-running-operation', { duration: 5, steps: 5 }, ['ops']);
    expect(reply).toMatchObject({ status: 'error', error: { code: 'tool_timeout', retryable: true } });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await serverStatus(bus, 'everything')).toMatchObject({ state: 'ready' });
    expect(await call('everything_echo', { message: 'still here' }, ['ops'])).toMatchObject({ status: 'ok' });
  });

  it('keeps secrets from the environment out of the logs and the status', async () => {
    await waitFor('refusing server failed', async () => (await serverStatus(bus, 'refusing'))?.last_error);
    const status = JSON.stringify(await mcpStatus(bus));
    const logs = logLines.join('');
    // The logs are really captured: connections, failures and calls are in them.
    expect(logs).toContain('MCP server ready');
    expect(logs).toContain('could not connect to MCP server');
    for (const secret of Object.values(SECRETS)) {
      expect(status).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});
