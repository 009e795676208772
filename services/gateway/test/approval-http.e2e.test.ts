import { Bus, ReplyError, serve } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, wireError, type ApprovalDecision, type PendingApproval } from '@hermes/contracts';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayServer, type GatewayServer } from '../src/index.js';
import { openSse } from './support/sse-client.js';
import { standInDispatcher } from './support/stand-in-dispatcher.js';
import { ADMIN, ALICE, apiKeys, logger } from './support/test-keys.js';

let natsUrl: string;
let bus: Bus;
let gateway: GatewayServer;
let base: string;
let dispatcher: ReturnType<typeof standInDispatcher>;
/** Every decision the stand-in toolbus received. */
const decisions: ApprovalDecision[] = [];
/** Calls parked for approval, as `task_id/call_id`. */
const parked = new Set<string>();

/** Plays the toolbus's part: decides parked calls, and answers not_found for any other. */
function standInToolbus(on: Bus) {
  return serve(on, contracts.toolApprovalDecide, async (req) => {
    decisions.push(req);
    const key = `${req.task_id}/${req.call_id}`;
    if (!parked.delete(key)) throw new ReplyError(wireError('not_found', `no call ${req.call_id} waits for approval in task ${req.task_id}`));
    return { call_id: req.call_id, status: req.decision === 'approve' ? ('approved' as const) : ('denied' as const) };
  });
}

beforeAll(async () => {
  const nats = await startNatsServer();
  natsUrl = nats.url;
  bus = await Bus.connect({ servers: nats.url, name: 'gateway-approval-test', logger });
  dispatcher = standInDispatcher(bus);
  standInToolbus(bus);
  gateway = createGatewayServer({ bus, apiKeys, logger });
  const { port } = await gateway.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${port}`;
  dispatcher.addTask('t_appr_alice', 'alice', { status: 'running' });
  dispatcher.addTask('t_appr_bob', 'bob', { status: 'running' });
});

afterAll(async () => {
  await gateway?.close();
  await bus?.drain();
  await cleanupAll();
});

interface ApiBody {
  call_id?: string;
  status?: string;
  code?: string;
  detail?: string;
  retryable?: boolean;
  issues?: { path: string }[];
}

async function decide(path: string, body: unknown, key = ALICE, at = base) {
  const res = await fetch(`${at}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as ApiBody };
}

const sent = (callId: string) => decisions.filter((d) => d.call_id === callId);

describe('POST /v1/tasks/:id/approvals/:call_id', () => {
  it('approves a parked call for the task owner, who is recorded as the decider', async () => {
    parked.add('t_appr_alice/c-approve');
    const { status, json } = await decide('/v1/tasks/t_appr_alice/approvals/c-approve', { decision: 'approve' });
    expect(status).toBe(200);
    expect(json).toEqual({ call_id: 'c-approve', status: 'approved' });
    expect(sent('c-approve')).toEqual([{ task_id: 't_appr_alice', call_id: 'c-approve', decision: 'approve', decided_by: 'alice' }]);
  });

  it('denies with a reason, and takes a call id with reserved characters when URL-encoded', async () => {
    const callId = 'call:t_appr_alice:st1:2:0';
    parked.add(`t_appr_alice/${callId}`);
    const { status, json } = await decide(`/v1/tasks/t_appr_alice/approvals/${encodeURIComponent(callId)}`, {
      decision: 'deny',
      reason: 'wrong account',
    });
    expect(status).toBe(200);
    expect(json).toEqual({ call_id: callId, status: 'denied' });
    expect(sent(callId)).toEqual([{ task_id: 't_appr_alice', call_id: callId, decision: 'deny', decided_by: 'alice', reason: 'wrong account' }]);
  });

  it("answers 404 for another user's task without asking the toolbus, but lets an admin decide", async () => {
    parked.add('t_appr_bob/c-bob');
    const denied = await decide('/v1/tasks/t_appr_bob/approvals/c-bob', { decision: 'approve' });
    expect(denied.status).toBe(404);
    expect(denied.json.code).toBe('not_found');
    expect(sent('c-bob')).toEqual([]);

    const admin = await decide('/v1/tasks/t_appr_bob/approvals/c-bob', { decision: 'approve' }, ADMIN);
    expect(admin.status).toBe(200);
    expect(sent('c-bob')).toEqual([{ task_id: 't_appr_bob', call_id: 'c-bob', decision: 'approve', decided_by: 'ops' }]);
  });

  it('answers 404 when the toolbus has no such call waiting', async () => {
    const { status, json } = await decide('/v1/tasks/t_appr_alice/approvals/c-unknown', { decision: 'approve' });
    expect(status).toBe(404);
    expect(json.code).toBe('not_found');
    expect(sent('c-unknown')).toHaveLength(1);
  });

  it('answers 400 with the issues for a bad decision or an unknown field, before anything is asked', async () => {
    const bad = await decide('/v1/tasks/t_appr_alice/approvals/c-bad', { decision: 'maybe', urgency: 'high' });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_payload');
    const paths = (bad.json.issues ?? []).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['/decision', '/urgency']));
    const notJson = await decide('/v1/tasks/t_appr_alice/approvals/c-bad', '{"decision":');
    expect(notJson.status).toBe(400);
    expect(notJson.json.code).toBe('invalid_json');
    expect(sent('c-bad')).toEqual([]);
  });

  it('answers 405 for another method on the route', async () => {
    const res = await fetch(`${base}/v1/tasks/t_appr_alice/approvals/c1`, { headers: { authorization: `Bearer ${ALICE}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('answers 503 no_responders when no toolbus is running', async () => {
    const lonely = await Bus.connect({ servers: natsUrl, name: 'lonely', logger, prefix: 'notoolbus' });
    const lonelyDispatcher = standInDispatcher(lonely);
    lonelyDispatcher.addTask('t_appr_alice', 'alice');
    const other = createGatewayServer({ bus: lonely, apiKeys, logger });
    const { port } = await other.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { status, json } = await decide('/v1/tasks/t_appr_alice/approvals/c1', { decision: 'approve' }, ALICE, `http://127.0.0.1:${port}`);
      expect(status).toBe(503);
      expect(json).toMatchObject({ code: 'no_responders', retryable: true });
    } finally {
      await other.close();
      lonelyDispatcher.stop();
      await lonely.drain();
    }
  });
});

describe('GET /v1/approvals/events', () => {
  /** What the stand-in toolbus lists as waiting, across teams and users. */
  const waiting: PendingApproval[] = [];
  const pendingOf = (call_id: string, user_id: string, team = DEFAULT_TEAM): PendingApproval => ({
    call_id,
    task_id: `t_${call_id}`,
    subtask_id: 'main',
    step: 1,
    team,
    user_id,
    tool: 'wire_money',
    arguments: { amount: 1 },
    requested_at: new Date().toISOString(),
    expires_at: new Date(Date.now() + 60_000).toISOString(),
  });
  const notify = (team: string, call_id: string) =>
    bus.publish(contracts.toolApprovalChanged, { task_id: `t_${call_id}`, call_id, status: 'pending' }, { subject: bus.subjects.toolApprovalChanged(team) });

  it("sends the caller's list at once and again on each change notice of the team (the periodic refresh is set out of reach)", async () => {
    serve(bus, contracts.toolApprovalList, async (req) => ({
      approvals: waiting.filter((a) => a.team === req.team && (req.user_id === null || a.user_id === req.user_id)),
    }));
    const other = createGatewayServer({ bus, apiKeys, logger, approvalRefreshMs: 600_000 });
    const { port } = await other.listen({ port: 0, host: '127.0.0.1' });
    const sse = await openSse(`http://127.0.0.1:${port}/v1/approvals/events`, { authorization: `Bearer ${ALICE}` });
    try {
      expect(sse.status).toBe(200);
      const first = await sse.next();
      expect(first).toMatchObject({ event: 'approvals' });
      expect(JSON.parse(first.data)).toEqual({ approvals: [] });

      // Bob's call and another team's alice's change nothing alice sees: her next list is the one with her call.
      waiting.push(pendingOf('c-bob', 'bob'), pendingOf('c-b-alice', 'alice', 'team-b'));
      await notify(DEFAULT_TEAM, 'c-bob');
      await notify('team-b', 'c-b-alice');
      waiting.push(pendingOf('c-alice', 'alice'));
      await notify(DEFAULT_TEAM, 'c-alice');
      const second = await sse.next(10_000);
      expect(JSON.parse(second.data).approvals.map((a: PendingApproval) => a.call_id)).toEqual(['c-alice']);

      waiting.splice(0, waiting.length);
      await notify(DEFAULT_TEAM, 'c-alice');
      expect(JSON.parse((await sse.next(10_000)).data)).toEqual({ approvals: [] });
    } finally {
      sse.close();
      await other.close(1000);
    }
  });
});
