import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { mcpStatus, serverStatus, startMcpRig, waitFor, type McpTestRig } from './mcp-helpers.js';

// Issue 17: MCP credentials were printed on every reconnect. Canary secrets sit in a header (from
// the environment and literal), in a stdio server's env, and in a URL; a server that echoes the
// header back in its error body and a child that prints its env on stderr try to leak them.

const CANARY = {
  header: 'canary-hdr-5e1d77c2',
  literalHeader: 'canary-lit-09b4aa31',
  env: 'canary-env-c3f8e612',
  literalEnv: 'canary-tok-71aa0f5d',
  url: 'canary-url-2be4d8a0',
};

let rig: McpTestRig;
let bus: Bus;
let echoing: Server;
const logLines: string[] = [];
const logs = (): string => logLines.join('');
const connectFailures = (server: string): number =>
  logLines.filter((l) => l.includes('could not connect to MCP server') && l.includes(`"mcp_server":"${server}"`)).length;

beforeAll(async () => {
  process.env.HERMES_TEST_CANARY_HEADER = CANARY.header;
  process.env.HERMES_TEST_CANARY_ENV = CANARY.env;
  // Refuses with 500 (no SSE fallback) and the credentials it got in the body, as a careless server might.
  echoing = createServer((req, res) => void res.writeHead(500).end(`credentials rejected: ${req.headers.authorization} / ${req.headers['x-api-key']}`));
  await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve));
  const port = (echoing.address() as AddressInfo).port;
  rig = await startMcpRig({
    fileName: 'mcp.json',
    servers: {
      echoing: {
        transport: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { authorization: 'Bearer ${HERMES_TEST_CANARY_HEADER}', 'x-api-key': CANARY.literalHeader },
      },
      leaky: {
        transport: 'stdio',
        command: '/bin/sh',
        args: ['-c', 'echo "starting with $API_TOKEN and $HINT" >&2; exit 3'],
        env: { API_TOKEN: CANARY.literalEnv, HINT: '${HERMES_TEST_CANARY_ENV}' },
      },
      inurl: { transport: 'http', url: `http://svc:${CANARY.url}@127.0.0.1:${port}/mcp` },
    },
    settings: { MCP_CONFIG_WATCH: false, MCP_RECONNECT_MAX_MS: 300 },
    logger: createLogger({ service: 'toolbus-test', level: 'debug', destination: { write: (line: string) => void logLines.push(line) } }),
  });
  bus = rig.bus;
}, 30_000);

afterAll(async () => {
  await rig?.stop();
  echoing?.closeAllConnections();
  echoing?.close();
});

describe('MCP secrets', () => {
  it('refuses a server whose URL carries credentials, naming the field and pointing to headers/env', async () => {
    const { problems, servers } = await mcpStatus(bus);
    expect(servers.map((s) => s.name).sort()).toEqual(['echoing', 'leaky']);
    expect(problems).toEqual([
      expect.objectContaining({ server: 'inurl', field: 'url', message: expect.stringMatching(/user info \(user:pass@\).*headers.*env/) }),
    ]);
  });

  it('never prints a configured secret in logs or status across failed connects and reconnects', async () => {
    // Several rounds each, so reconnect paths (back-off, stderr tail, last_error) are all exercised.
    await waitFor('three failed connects each', async () => connectFailures('echoing') >= 3 && connectFailures('leaky') >= 3, 20_000);
    const echoed = await serverStatus(bus, 'echoing');
    const leaky = await serverStatus(bus, 'leaky');
    // The leaks really happened, and were redacted: the texts are there with *** in place of the values.
    expect(echoed?.last_error).toContain('credentials rejected: *** / ***');
    expect(leaky?.last_error).toContain('starting with *** and ***');
    expect(logs()).toContain('credentials rejected: *** / ***');
    // A debug call through the CLI's subject gets a structured error, also clean.
    const direct = await request(bus, contracts.mcpCall, { server: 'echoing', tool: 'anything', arguments: {} }).catch((err: unknown) => err as Error);
    expect(direct).toMatchObject({ code: 'provider_unavailable' });
    const status = JSON.stringify(await mcpStatus(bus));
    for (const secret of Object.values(CANARY)) {
      expect(logs()).not.toContain(secret);
      expect(status).not.toContain(secret);
      expect(String((direct as Error).message)).not.toContain(secret);
    }
  });
});
