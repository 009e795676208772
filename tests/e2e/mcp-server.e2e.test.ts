import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { dirname } from 'node:path';
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
const APPROVAL_TIMEOUT_MS = 15_000;

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
    // Long enough for a test to find and decide a parked call on a loaded machine, short enough
    // for the timeout test to wait out.
    serviceEnv: { toolbus: { TOOL_APPROVAL_TIMEOUT_MS: String(APPROVAL_TIMEOUT_MS) } },
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

/** The synthesised task of an MCP host call, from its call id (`<task>.mcp.1.0`). */
function taskOfCall(callId: string): string {
  const taskId = callId.split('.')[0]!;
  expect(taskId).toMatch(/^mcp_[0-9a-f]{32}$/);
  return taskId;
}

/** The parked call of this tool as the key's owner sees it in GET /v1/approvals, once it is listed. */
async function pendingApproval(key: string, tool: string, to: string): Promise<{ task_id: string; call_id: string; expires_at: string }> {
  return eventually(
    async () => {
      const res = await fetch(`${stack.gatewayUrl}/v1/approvals`, { headers: { authorization: `Bearer ${key}` } });
      const { approvals } = (await res.json()) as {
        approvals: { task_id: string; call_id: string; tool: string; arguments: { to?: string }; expires_at: string }[];
      };
      return approvals.find((a) => a.tool === tool && a.arguments.to === to);
    },
    // Generous: the call is parked by the toolbus on a shared 2-core machine.
    10_000,
    () => `a pending ${tool} call to ${to}`,
  );
}

async function decide(key: string, p: { task_id: string; call_id: string }, decision: 'approve' | 'deny', reason?: string): Promise<Response> {
  return fetch(`${stack.gatewayUrl}/v1/tasks/${p.task_id}/approvals/${encodeURIComponent(p.call_id)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision, ...(reason ? { reason } : {}) }),
  });
}

/** Calls a require_confirm tool and collects the progress the gateway sends while the call waits. */
function callWaitingForApproval(client: Client, to: string): { result: Promise<CallToolResult>; progress: { progress: number; message?: string }[] } {
  const progress: { progress: number; message?: string }[] = [];
  const result = client.callTool({ name: 'confirm_transfer', arguments: { to, amount_cents: 2500 } }, undefined, {
    onprogress: (p) => progress.push(p),
    resetTimeoutOnProgress: true,
    // Beyond the approval timeout, so the gateway's answer (not the SDK's own timeout) ends the call.
    timeout: APPROVAL_TIMEOUT_MS + 30_000,
  }) as Promise<CallToolResult>;
  return { result, progress };
}

// The MCP Inspector's CLI mode (`mcp-inspector-cli --cli`), as a developer points it at Hermes.
const inspectorCli = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli');

/** Runs the MCP Inspector in CLI mode against the gateway's /mcp with this key; answers its JSON output. */
async function inspect(key: string, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [inspectorCli, '--cli', `${stack.gatewayUrl}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${key}`, ...args],
    // Generous: the inspector starts a second Node process of its own on a shared 2-core machine.
    // Its cwd is its own build folder: 1.0.x tests for `../package.json` against the cwd but imports
    // it relative to its module, so from any other cwd it reads a package.json that is not there.
    { timeout: 60_000, cwd: dirname(inspectorCli) },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('Hermes as an MCP server at /mcp', () => {
  it('the MCP Inspector CLI lists the key’s tools and hermes_submit_task, and calls a tool for its result', async () => {
    const listed = (await inspect(FINANCE_KEY, ['--method', 'tools/list'])) as { tools: { name: string; inputSchema: { properties?: object } }[] };
    const names = listed.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['hermes_submit_task', 'hermes_task_status', 'ledger_append', 'restricted_op']));
    expect(listed.tools.find((t) => t.name === 'ledger_append')?.inputSchema.properties).toHaveProperty('entry');
    // Another team's key, whose roles lack finance, is not shown the finance tool.
    const otherNames = ((await inspect(OTHER_TEAM_KEY, ['--method', 'tools/list'])) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(otherNames).toContain('ledger_append');
    expect(otherNames).not.toContain('restricted_op');

    const called = await inspect(FINANCE_KEY, ['--method', 'tools/call', '--tool-name', 'ledger_append', '--tool-arg', 'entry=from the inspector']);
    expect(called.isError).toBeFalsy();
    const { result } = payloadOf(called) as { result: { written: string; key: string } };
    expect(result.written).toBe('from the inspector');
    const taskId = result.key.split(':')[0]!;
    expect(ledger.lines(taskId)).toMatchObject([{ tool: 'ledger_append', entry: 'from the inspector', user_id: 'fiona' }]);
  });

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
    const [record] = await auditRecords(stack.bus, taskOfCall(error.call_id), 1);
    expect(record).toMatchObject({ tool: 'restricted_op', user_id: 'fiona', roles: ['user'], outcome: 'denied', error_code: 'tool_forbidden' });
    expect(ledger.lines().filter((l) => l.tool === 'restricted_op')).toEqual([]);
  });

  it('a require_confirm tool called over MCP waits for approval, then runs exactly once and answers its result', async () => {
    const client = await mcpClient(FINANCE_KEY);
    const call = callWaitingForApproval(client, 'acct-approved');
    const pending = await pendingApproval(FINANCE_KEY, 'confirm_transfer', 'acct-approved');
    expect(pending.task_id).toMatch(/^mcp_[0-9a-f]{32}$/);
    // Nothing ran while it waited, and the host heard why it waits.
    expect(ledger.lines(pending.task_id)).toEqual([]);
    await eventually(
      () => call.progress.length > 0,
      10_000,
      () => 'a progress notification while the call waits',
    );
    expect(call.progress[0]!.message).toContain(pending.call_id);

    const decided = await decide(FINANCE_KEY, pending, 'approve');
    expect(decided.status).toBe(200);
    expect(await decided.json()).toEqual({ call_id: pending.call_id, status: 'approved' });

    const result = await call.result;
    expect(result.isError).toBeFalsy();
    expect(payloadOf(result)).toMatchObject({ call_id: pending.call_id, result: { transferred: 2500, to: 'acct-approved' } });
    expect(ledger.countByKey(pending.task_id)).toEqual({ [`${pending.task_id}:mcp:1:0`]: 1 });
    const records = await auditRecords(stack.bus, pending.task_id, 2);
    expect(records.map((r) => r.outcome)).toEqual(expect.arrayContaining(['pending_approval', 'ok']));
    expect(records.find((r) => r.outcome === 'ok')).toMatchObject({ tool: 'confirm_transfer', user_id: 'fiona', decided_by: 'team-a/fiona' });
  });

  it('a denied MCP call answers a structured approval_denied and never runs', async () => {
    const client = await mcpClient(FINANCE_KEY);
    const call = callWaitingForApproval(client, 'acct-denied');
    const pending = await pendingApproval(FINANCE_KEY, 'confirm_transfer', 'acct-denied');
    // Another team's key (same user id) may not decide it: it is not that user's call.
    expect((await decide(OTHER_TEAM_KEY, pending, 'approve')).status).toBe(404);

    expect((await decide(FINANCE_KEY, pending, 'deny', 'not this account')).status).toBe(200);
    const result = await call.result;
    expect(result.isError).toBe(true);
    expect(payloadOf(result)).toMatchObject({ error: { code: 'approval_denied', retryable: false, call_id: pending.call_id } });
    expect(JSON.stringify(payloadOf(result))).toContain('not this account');
    expect(ledger.lines(pending.task_id)).toEqual([]);
  });

  it('an MCP call nobody decides ends with approval_timeout once the approval time runs out, and never runs', async () => {
    const client = await mcpClient(FINANCE_KEY);
    const call = callWaitingForApproval(client, 'acct-undecided');
    const pending = await pendingApproval(FINANCE_KEY, 'confirm_transfer', 'acct-undecided');
    const result = await call.result;
    expect(result.isError).toBe(true);
    expect(payloadOf(result)).toMatchObject({ error: { code: 'approval_timeout', retryable: false, call_id: pending.call_id } });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(pending.expires_at));
    expect(ledger.lines(pending.task_id)).toEqual([]);
  }, 60_000);

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
