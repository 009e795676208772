import { Writable } from 'node:stream';
import { Bus, serve } from '@hermes/bus';
import { contracts, type ToolAuditRecord } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standInDispatcher } from './support/stand-in-dispatcher.js';
import { startTestGateway } from './support/test-gateway.js';
import { ADMIN, ALICE, apiKeys, BOB } from './support/test-keys.js';

// GET /v1/tasks/:id/audit and POST /v1/mcp/servers/:server/approve-change against a real
// nats-server: the audit stream absent (no toolbus ever started) and then written to, and the
// toolbus's approve-change request first unanswered and then answered by a stand-in toolbus.
let bus: Bus;
let base: string;
let stop: (() => Promise<void>) | undefined;
/** The gateway's log lines, to find the record of who approved a change. */
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  const nats = await startNatsServer();
  bus = await Bus.connect({ servers: nats.url, name: 'gateway-audit-test', logger: createLogger({ service: 'gateway-test', level: 'silent' }) });
  const dispatcher = standInDispatcher(bus);
  dispatcher.addTask('t_audit_alice', 'alice', { status: 'completed' });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  ({ base, stop } = await startTestGateway({ bus, apiKeys, logger: createLogger({ service: 'gateway-test', level: 'info', destination: sink }) }));
});

// Without a gateway (a failed start), the test kit's nats-server is still stopped.
afterAll(() => (stop ? stop() : cleanupAll()));

async function call(method: string, path: string, key: string) {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', json: (await res.json()) as Record<string, unknown> };
}

const record = (tool: string, outcome: ToolAuditRecord['outcome']): ToolAuditRecord => ({
  time: new Date().toISOString(),
  call_id: `call:${tool}`,
  idempotency_key: `t_audit_alice:${tool}`,
  task_id: 't_audit_alice',
  subtask_id: 'main',
  step: 1,
  call_index: 0,
  user_id: 'alice',
  roles: ['user'],
  tool,
  arguments: '{"q":"x"}',
  outcome,
  duration_ms: 3,
  replayed: false,
  cached: false,
});

describe('GET /v1/tasks/:id/audit', () => {
  it('answers 503 audit_unavailable, retryable, while no audit stream exists, then the records once the toolbus wrote them', async () => {
    const missing = await call('GET', '/v1/tasks/t_audit_alice/audit', ALICE);
    expect(missing).toMatchObject({ status: 503, json: { code: 'audit_unavailable', retryable: true } });
    expect(missing.type).toMatch(/^application\/problem\+json/);

    await bus.ensureStreams(['toolAudit']);
    expect(await call('GET', '/v1/tasks/t_audit_alice/audit', ALICE)).toMatchObject({ status: 200, json: { task_id: 't_audit_alice', records: [] } });
    for (const r of [record('lookup', 'ok'), record('send_mail', 'denied')]) {
      await bus.publish(contracts.toolAudit, r, { subject: bus.subjects.toolAudit(r.task_id) });
    }
    const { status, json } = await call('GET', '/v1/tasks/t_audit_alice/audit', ALICE);
    expect(status).toBe(200);
    expect((json.records as ToolAuditRecord[]).map((r) => [r.tool, r.outcome])).toEqual([
      ['lookup', 'ok'],
      ['send_mail', 'denied'],
    ]);
    expect((await call('GET', '/v1/tasks/t_audit_alice/audit', ADMIN)).status).toBe(200);
  });

  it("refuses another user's task as not found, and a malformed id as invalid", async () => {
    expect(await call('GET', '/v1/tasks/t_audit_alice/audit', BOB)).toMatchObject({ status: 404, json: { code: 'not_found' } });
    expect(await call('GET', '/v1/tasks/bad%20id/audit', ALICE)).toMatchObject({ status: 400 });
  });
});

describe('POST /v1/mcp/servers/:server/approve-change', () => {
  it('answers a retryable problem while no toolbus answers, and the approved tools once one does, logging the admin who approved', async () => {
    const unanswered = await call('POST', '/v1/mcp/servers/files/approve-change', ADMIN);
    expect(unanswered.status).toBeGreaterThanOrEqual(500);
    expect(unanswered.json).toMatchObject({ retryable: true });

    const asked: unknown[] = [];
    serve(bus, contracts.mcpApproveChange, async (req) => {
      asked.push(req);
      return { toolbus_id: 'tb-1', approved: req.tool ? [req.tool] : ['read_file', 'write_file'] };
    });
    expect(await call('POST', '/v1/mcp/servers/files/approve-change?tool=read_file', ADMIN)).toMatchObject({
      status: 200,
      json: { toolbus_id: 'tb-1', approved: ['read_file'] },
    });
    expect(asked).toEqual([{ server: 'files', tool: 'read_file' }]);
    expect(logLines.find((l) => l.msg === 'MCP description change approved')).toMatchObject({ user_id: 'ops', server: 'files', tools: ['read_file'] });
  });

  it('refuses a user who is not an admin, and a malformed server name, without asking the toolbus', async () => {
    expect(await call('POST', '/v1/mcp/servers/files/approve-change', ALICE)).toMatchObject({ status: 403, json: { code: 'forbidden' } });
    expect(await call('POST', '/v1/mcp/servers/no.dots/approve-change', ADMIN)).toMatchObject({ status: 400, json: { code: 'invalid_server' } });
  });
});
