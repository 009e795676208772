import { describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, contracts, type ApprovalDecision, type TaskEvent } from '@hermes/contracts';
import { RemoteError, request, type Bus } from '@hermes/bus';
import type { ToolbusSettings } from '../src/toolbus-settings.js';
import {
  auditRecords,
  callRequest,
  callTool,
  connect,
  freshPrefix,
  natsForFile,
  nextMessage,
  remoteTool,
  type StandInProvider,
  startStandInProvider,
  startTestToolbus,
  streamMessages,
  waitForTool,
} from './helpers.js';

const nats = natsForFile();
const cleanups = nats.cleanups;

/** A bus with the task event stream, a `wire_money` tool that needs a human's approval, and a toolbus. */
async function setup(settings: Partial<ToolbusSettings> = {}) {
  const bus = await connect(nats.url, freshPrefix());
  await bus.ensureStreams(['taskEvents']);
  const toolbus = await startTestToolbus(bus, settings);
  const provider: StandInProvider = await startStandInProvider(bus, {
    provider: 'bank',
    tools: [
      { ...remoteTool('wire_money'), require_confirm: true, parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] } },
    ],
    run: async (r) => ({ sent: r.arguments.amount }),
  });
  let current = toolbus;
  cleanups.push(async () => {
    provider.stop();
    await current.stop(2000);
    await bus.drain();
  });
  await waitForTool(bus, 'wire_money');
  const decide = (d: Partial<ApprovalDecision> & Pick<ApprovalDecision, 'call_id' | 'decision'>) =>
    request(bus, contracts.toolApprovalDecide, { task_id: 't_pay', decided_by: 'alice', ...d });
  return {
    bus,
    provider,
    decide,
    get toolbus() {
      return current;
    },
    async restartToolbus() {
      await current.stop(2000);
      current = await startTestToolbus(bus, settings);
    },
  };
}

const approvalEvents = async (bus: Bus, taskId: string) =>
  (await streamMessages<TaskEvent>(bus, bus.subjects.streams.taskEvents, bus.subjects.taskEvents(DEFAULT_TEAM, taskId))).filter(
    (e) => e.type === 'io.hermes.task.step' && (e.data as { kind: string }).kind === 'approval_needed',
  );

describe('approvals', () => {
  it('parks a require_confirm call, asks for approval once, and runs it after approval', async () => {
    const { bus, provider, decide } = await setup();
    const req = callRequest({ task_id: 't_pay', tool: 'wire_money', arguments: '{"amount": 100}' });
    const pending = await callTool(bus, req);
    expect(pending).toMatchObject({ status: 'pending_approval', call_id: expect.any(String), approval_expires_at: expect.any(String) });
    expect(Date.parse(pending.approval_expires_at!) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(await callTool(bus, req)).toEqual(pending);
    expect(provider.received).toHaveLength(0);

    const events = await approvalEvents(bus, 't_pay');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      task_id: 't_pay',
      subtask_id: 'main',
      step: req.step,
      kind: 'approval_needed',
      detail: { call_id: pending.call_id, tool: 'wire_money', arguments: { amount: 100 }, expires_at: pending.approval_expires_at },
    });

    const settled = await nextMessage(bus, bus.subjects.toolCallSettled('t_pay'));
    expect(await decide({ call_id: pending.call_id, decision: 'approve' })).toEqual({ call_id: pending.call_id, status: 'approved' });
    expect(await settled.next).toEqual({ call_id: pending.call_id, status: 'approved' });
    expect(await callTool(bus, req)).toMatchObject({ status: 'ok', result: { sent: 100 }, replayed: true });
    expect(provider.received).toHaveLength(1);
    const again = await decide({ call_id: pending.call_id, decision: 'deny' }).catch((e: unknown) => e);
    expect((again as RemoteError).wire).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('already approved by alice'),
      details: { reason: 'already_decided' },
    });
    await expect.poll(async () => (await auditRecords(bus, 't_pay')).map((a) => [a.outcome, a.decided_by ?? null])).toContainEqual(['ok', 'alice']);
  });

  it('answers a denied call with approval_denied and the reason, without running it', async () => {
    const { bus, provider, decide } = await setup();
    const req = callRequest({ task_id: 't_pay', tool: 'wire_money', arguments: '{"amount": 5000}' });
    const pending = await callTool(bus, req);
    const settled = await nextMessage(bus, bus.subjects.toolCallSettled('t_pay'));
    expect(await decide({ call_id: pending.call_id, decision: 'deny', reason: 'too much at once' })).toMatchObject({ status: 'denied' });
    expect(await settled.next).toEqual({ call_id: pending.call_id, status: 'denied' });
    const reply = await callTool(bus, req);
    expect(reply.error).toMatchObject({ code: 'approval_denied', retryable: false, message: expect.stringContaining('too much at once') });
    expect(provider.received).toHaveLength(0);
    await expect
      .poll(async () => (await auditRecords(bus, 't_pay')).map((a) => [a.outcome, a.error_code ?? null, a.decided_by ?? null]))
      .toContainEqual(['denied', 'approval_denied', 'alice']);
  });

  it('refuses a decision for another task or an unknown call with not_found', async () => {
    const { bus, decide } = await setup();
    const pending = await callTool(bus, callRequest({ task_id: 't_pay', tool: 'wire_money', arguments: '{"amount": 1}' }));
    await expect(decide({ task_id: 't_other', call_id: pending.call_id, decision: 'approve' })).rejects.toMatchObject({ code: 'not_found' });
    const unknown = await decide({ call_id: 't_pay.main.999.0', decision: 'approve' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(RemoteError);
    expect((unknown as RemoteError).wire).toMatchObject({ code: 'not_found', retryable: false, details: { reason: 'unknown_call' } });
  });

  it('times a call out when nobody decides in time, and wakes the waiting loop', async () => {
    const { bus, provider } = await setup({ TOOL_APPROVAL_TIMEOUT_MS: 600 });
    const req = callRequest({ task_id: 't_pay', tool: 'wire_money', arguments: '{"amount": 7}' });
    const settled = await nextMessage(bus, bus.subjects.toolCallSettled('t_pay'), 3000);
    const pending = await callTool(bus, req);
    expect(await settled.next).toEqual({ call_id: pending.call_id, status: 'denied' });
    expect((await callTool(bus, req)).error).toMatchObject({ code: 'approval_timeout', retryable: false });
    expect(provider.received).toHaveLength(0);
    const late = await request(bus, contracts.toolApprovalDecide, { task_id: 't_pay', call_id: pending.call_id, decision: 'approve', decided_by: 'bob' }).catch(
      (e: unknown) => e,
    );
    expect((late as RemoteError).wire).toMatchObject({ code: 'not_found', details: { reason: 'approval_expired' } });
  });

  it('keeps a pending approval across a toolbus restart; the new instance decides and runs it', async () => {
    const env = await setup();
    const req = callRequest({ task_id: 't_pay', tool: 'wire_money', arguments: '{"amount": 42}' });
    const pending = await callTool(env.bus, req);
    const before = env.toolbus.instanceId;
    await env.restartToolbus();
    expect(env.toolbus.instanceId).not.toBe(before);
    expect(await callTool(env.bus, req)).toEqual(pending);
    const settled = await nextMessage(env.bus, env.bus.subjects.toolCallSettled('t_pay'));
    expect(await env.decide({ call_id: pending.call_id, decision: 'approve' })).toMatchObject({ status: 'approved' });
    await settled.next;
    expect(await callTool(env.bus, req)).toMatchObject({ status: 'ok', result: { sent: 42 } });
    expect(env.provider.received).toHaveLength(1);
  });

  it('times out a pending approval after a restart, from the index the new instance loaded', async () => {
    const env = await setup({ TOOL_APPROVAL_TIMEOUT_MS: 1500 });
    const pending = await callTool(env.bus, callRequest({ task_id: 't_pay', tool: 'wire_money', arguments: '{"amount": 3}' }));
    await env.restartToolbus();
    const settled = await nextMessage(env.bus, env.bus.subjects.toolCallSettled('t_pay'), 4000);
    expect(await settled.next).toEqual({ call_id: pending.call_id, status: 'denied' });
  });
});

describe('listing pending approvals', () => {
  it("lists a team's waiting calls for one user or the whole team, never another team's, and announces each park and decision on the team's subject", async () => {
    const { bus, decide } = await setup();
    const list = (team: string, user_id: string | null) => request(bus, contracts.toolApprovalList, { team, user_id });
    const changedDefault = await nextMessage(bus, bus.subjects.toolApprovalChanged(DEFAULT_TEAM));
    const alice = await callTool(bus, callRequest({ task_id: 't_pay', user_id: 'alice', tool: 'wire_money', arguments: '{"amount": 1}' }));
    expect(await changedDefault.next).toEqual({ task_id: 't_pay', call_id: alice.call_id, status: 'pending' });
    const bob = await callTool(bus, callRequest({ task_id: 't_pay_bob', user_id: 'bob', tool: 'wire_money', arguments: '{"amount": 2}' }));
    // The same user id in another team is another user.
    const aliceOfB = await callTool(bus, callRequest({ task_id: 't_pay_b', user_id: 'alice', team: 'team-b', tool: 'wire_money', arguments: '{"amount": 3}' }));

    await expect.poll(async () => (await list(DEFAULT_TEAM, null)).approvals.map((a) => a.call_id)).toEqual([alice.call_id, bob.call_id]);
    expect((await list(DEFAULT_TEAM, 'alice')).approvals).toEqual([
      expect.objectContaining({
        call_id: alice.call_id,
        task_id: 't_pay',
        team: DEFAULT_TEAM,
        user_id: 'alice',
        tool: 'wire_money',
        arguments: { amount: 1 },
        expires_at: alice.approval_expires_at,
      }),
    ]);
    expect((await list('team-b', 'alice')).approvals.map((a) => a.call_id)).toEqual([aliceOfB.call_id]);
    expect((await list('team-c', null)).approvals).toEqual([]);

    const changedAgain = await nextMessage(bus, bus.subjects.toolApprovalChanged(DEFAULT_TEAM));
    await decide({ call_id: alice.call_id, decision: 'deny' });
    expect(await changedAgain.next).toEqual({ task_id: 't_pay', call_id: alice.call_id, status: 'denied' });
    expect((await list(DEFAULT_TEAM, 'alice')).approvals).toEqual([]);
    expect((await list(DEFAULT_TEAM, null)).approvals.map((a) => a.call_id)).toEqual([bob.call_id]);
  });
});
