import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { eventually, type ChildService } from '@hermes/testkit';
import { startStack, type Stack } from './stack.js';
import { ModelScript } from './model-script.js';
import { auditRecords, Ledger, startToolProvider } from './tool-fixtures.js';

// Hermes as an MCP server: an MCP host (the SDK's own client over Streamable HTTP) with a
// gateway API key sees the tools that key's roles may use, runs them through the toolbus, and
// hands goals to Hermes agents.
const FINANCE_KEY = 'test-key-mcp-finance-0123456789';
const OTHER_TEAM_KEY = 'test-key-mcp-other-team-01234567';

let stack: Stack;
let model: ModelScript;
let ledger: Ledger;
let provider: ChildService;
const clients: Client[] = [];

beforeAll(async () => {
  stack = await startStack({
    apiKeys: [
      { key: FINANCE_KEY, user_id: 'fiona', team: 'team-a', roles: ['user', 'finance'] },
      // The same user id in another team is another user, without team-a's finance role.
      { key: OTHER_TEAM_KEY, user_id: 'fiona', team: 'team-b', roles: ['user'] },
    ],
  });
  model = new ModelScript(stack.llm);
  ledger = new Ledger();
  provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger });
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await provider?.stop(3000);
  await stack?.stop();
  ledger?.remove();
});

async function mcpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'e2e-host', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.gatewayUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The JSON a tool result carries (the gateway puts the same value in text and structuredContent). */
function payloadOf(result: unknown): Record<string, unknown> {
  const r = result as CallToolResult;
  const text = r.content.find((c) => c.type === 'text');
  const parsed = JSON.parse(text && 'text' in text ? text.text : '{}') as Record<string, unknown>;
  expect(r.structuredContent).toEqual(parsed);
  return parsed;
}

describe('Hermes as an MCP server at /mcp', () => {
  it('lists the key owner’s permitted tools and Hermes’s task tools, and runs a tool through the toolbus with its audit record', async () => {
    const client = await mcpClient(FINANCE_KEY);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['hermes_submit_task', 'hermes_task_status', 'ledger_append', 'restricted_op', 'time_now']));

    const result = await client.callTool({ name: 'ledger_append', arguments: { entry: 'from an MCP host' } });
    expect(result.isError).toBeFalsy();
    const { result: written } = payloadOf(result) as { result: { written: string; key: string } };
    expect(written.written).toBe('from an MCP host');
    // The call ran under a synthesised task of its own, as the key's owner.
    const taskId = written.key.split(':')[0]!;
    expect(taskId).toMatch(/^mcp_[0-9a-f]{32}$/);
    expect(ledger.lines(taskId)).toMatchObject([{ tool: 'ledger_append', entry: 'from an MCP host', user_id: 'fiona' }]);
    const [record] = await auditRecords(stack.bus, taskId, 1);
    expect(record).toMatchObject({ tool: 'ledger_append', user_id: 'fiona', outcome: 'ok', roles: ['user', 'finance'] });
  });

  it("does not show another team's key the tools its roles lack, and refuses the call with a structured, audited error", async () => {
    const client = await mcpClient(OTHER_TEAM_KEY);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('ledger_append');
    expect(names).not.toContain('restricted_op');

    const result = await client.callTool({ name: 'restricted_op', arguments: { account: 'ops-main' } });
    expect(result.isError).toBe(true);
    const { error } = payloadOf(result) as { error: { code: string; retryable: boolean; call_id: string } };
    expect(error).toMatchObject({ code: 'tool_forbidden', retryable: false });
  });

  it('answers arguments that break the tool’s schema with invalid_arguments and runs nothing', async () => {
    const client = await mcpClient(FINANCE_KEY);
    const before = ledger.lines().length;
    const result = await client.callTool({ name: 'ledger_append', arguments: { entry: 42 } });
    expect(result.isError).toBe(true);
    expect(payloadOf(result)).toMatchObject({ error: { code: 'invalid_arguments' } });
    expect(ledger.lines()).toHaveLength(before);
  });

  it('submits a task with hermes_submit_task and follows it to its result with hermes_task_status', async () => {
    const goal = 'summarise the MCP hand-off';
    model.on(goal, [{ content: 'Handed off and done.' }]);
    const client = await mcpClient(FINANCE_KEY);
    const submitted = await client.callTool({ name: 'hermes_submit_task', arguments: { goal } });
    expect(submitted.isError).toBeFalsy();
    const { task_id: taskId } = payloadOf(submitted) as { task_id: string };

    // A generous deadline: the task goes through dispatcher, runtime and model on a shared 2-core machine.
    const final = await eventually(
      async () => {
        const status = payloadOf(await client.callTool({ name: 'hermes_task_status', arguments: { task_id: taskId } })) as { status: string };
        return ['completed', 'failed', 'cancelled'].includes(status.status) && status;
      },
      60_000,
      () => `task ${taskId} to end`,
    );
    expect(final).toMatchObject({ task_id: taskId, status: 'completed' });
    expect(JSON.stringify(final)).toContain('Handed off and done.');

    // Another team's key cannot read the task, even with the same user id.
    const other = await mcpClient(OTHER_TEAM_KEY);
    const hidden = await other.callTool({ name: 'hermes_task_status', arguments: { task_id: taskId } });
    expect(hidden.isError).toBe(true);
    expect(payloadOf(hidden)).toMatchObject({ error: { status: 404 } });
  });

  it('refuses a request without a valid API key (401) as problem details with the Bearer challenge', async () => {
    for (const authorization of [undefined, 'Bearer not-a-key-of-anyone-0000000']) {
      const res = await fetch(`${stack.gatewayUrl}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="hermes"/);
      expect(await res.json()).toMatchObject({ status: 401, code: 'unauthorized', title: 'Unauthorized', retryable: false });
    }
  });
});
