import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '@hermes/bus';
import { contracts, type ToolCallReply, type ToolCallRequest } from '@hermes/contracts';
import type { ChildService } from '@hermes/testkit';
import { API_KEY, replicasOf, startStack, type Stack } from './stack.js';
import { callTools, ModelScript, offeredTools, toolMessages } from './model-script.js';
import { outcomeOf, runTask, stepOf, steps, submit, watchTask } from './tasks.js';
import { auditRecords, Ledger, startToolProvider, waitForToolList } from './tool-fixtures.js';

// Who may run which tool, and when: roles from the dispatcher's HERMES_USER_ROLES, approvals by a
// person over HTTP, and remote providers that come and go.
let stack: Stack;
let model: ModelScript;
let ledger: Ledger;
const providers: ChildService[] = [];

beforeAll(async () => {
  stack = await startStack({
    serviceEnv: {
      dispatcher: { HERMES_USER_ROLES: JSON.stringify({ default: ['user'], users: { fiona: ['user', 'finance'], 'team-t/alice': ['user', 'finance'] } }) },
      // Decisions in these tests take milliseconds; the approval-timeout test uses a shorter one still.
      toolbus: { TOOL_APPROVAL_TIMEOUT_MS: '20000' },
      // The loop asks a parked call again this often even without a settled notice.
      runtime: { APPROVAL_POLL_MS: '500' },
    },
  });
  model = new ModelScript(stack.llm);
  ledger = new Ledger();
  providers.push(await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger }));
}, 90_000);

afterAll(async () => {
  await Promise.all(providers.map((p) => p.stop(3000)));
  await stack?.stop();
  ledger?.remove();
});

/** Decides a parked call over the gateway's HTTP API as alice (who owns the task). */
async function decide(taskId: string, callId: string, decision: 'approve' | 'deny', reason?: string): Promise<Response> {
  return fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}/approvals/${encodeURIComponent(callId)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision, ...(reason ? { reason } : {}) }),
  });
}

const transfer = (id: string) => callTools({ id, name: 'confirm_transfer', arguments: { to: 'ACME', amount_cents: 5000 } });

describe('tool permissions', () => {
  it('refuses a role-restricted tool to a user without the role (tool_forbidden, audited as denied) and runs it for one with the role', async () => {
    const goal = 'check the finance account';
    model.on(goal, [callTools({ id: 'r1', name: 'restricted_op', arguments: { account: 'ops-main' } }), { content: 'Checked.' }]);
    const denied = await runTask(stack.bus, { user_id: 'alice', goal });

    expect(outcomeOf(denied.events).kind).toBe('completed');
    const [aliceAsked] = model.requests(goal);
    expect(offeredTools(aliceAsked!.body)).not.toContain('restricted_op');
    const [refusal] = toolMessages(model.requests(goal)[1]!.body);
    expect(refusal!.content).toMatchObject({ ok: false, error: { code: 'tool_forbidden', retryable: false } });
    expect(refusal!.content.error!.message).toMatch(/finance/);
    const [record] = await auditRecords(stack.bus, denied.taskId, 1);
    expect(record).toMatchObject({ tool: 'restricted_op', outcome: 'denied', error_code: 'tool_forbidden', user_id: 'alice', roles: ['user'] });
    expect(ledger.lines(denied.taskId)).toEqual([]);

    // fiona has 'finance' in the dispatcher's HERMES_USER_ROLES: offered the tool, and it runs.
    const goal2 = 'check the finance account as finance';
    model.on(goal2, [callTools({ id: 'r2', name: 'restricted_op', arguments: { account: 'ops-main' } }), { content: 'Balance read.' }]);
    const allowed = await runTask(stack.bus, { user_id: 'fiona', goal: goal2 });

    expect(outcomeOf(allowed.events)).toEqual({ kind: 'completed', output: 'Balance read.' });
    expect(offeredTools(model.requests(goal2)[0]!.body)).toContain('restricted_op');
    const [ran] = toolMessages(model.requests(goal2)[1]!.body);
    expect(ran!.content).toMatchObject({ ok: true, result: { account: 'ops-main', balance_cents: 123456 } });
    expect(ledger.lines(allowed.taskId)).toEqual([expect.objectContaining({ tool: 'restricted_op', user_id: 'fiona', roles: ['user', 'finance'] })]);
    expect((await auditRecords(stack.bus, allowed.taskId, 1))[0]).toMatchObject({ outcome: 'ok', roles: ['user', 'finance'] });
  });

  it("a task's tool allow-list narrows what is offered, and a call outside it is refused", async () => {
    const goal = 'only look things up';
    model.on(goal, [
      callTools({ id: 'in', name: 'lookup', arguments: { id: 'INV-3' } }, { id: 'out', name: 'ledger_append', arguments: { entry: 'sneaky' } }),
      { content: 'Looked up only.' },
    ]);
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal, tools: ['lookup'] });

    expect(outcomeOf(events).kind).toBe('completed');
    expect(offeredTools(model.requests(goal)[0]!.body)).toEqual(['lookup']);
    const [inside, outside] = toolMessages(model.requests(goal)[1]!.body);
    expect(inside!.content).toMatchObject({ ok: true, result: { id: 'INV-3' } });
    expect(outside!.content).toMatchObject({ ok: false, error: { code: 'tool_forbidden' } });
    expect(outside!.content.error!.message).toMatch(/allow-list/);
    expect(ledger.lines(taskId)).toEqual([]);
  });
});

describe('approvals', () => {
  it('an approved call runs exactly once after the decision and the task completes', async () => {
    const goal = 'transfer 50 EUR to ACME with approval';
    model.on(goal, [transfer('t1'), { content: 'Transferred.' }]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId);

    const needed = stepOf(await watch.next((e) => stepOf(e, 'approval_needed') !== undefined), 'approval_needed')!;
    const detail = needed.detail as { call_id: string; tool: string; arguments: unknown; expires_at: string };
    expect(detail).toMatchObject({ tool: 'confirm_transfer', arguments: { to: 'ACME', amount_cents: 5000 } });
    // Nothing ran while the call waited.
    expect(ledger.lines(taskId)).toEqual([]);

    const res = await decide(taskId, detail.call_id, 'approve');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ call_id: detail.call_id, status: 'approved' });
    const events = await watch.done;

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'Transferred.' });
    expect(ledger.lines(taskId)).toEqual([expect.objectContaining({ tool: 'confirm_transfer', to: 'ACME', amount_cents: 5000, key: `${taskId}:main:1:0` })]);
    const [result] = toolMessages(model.requests(goal)[1]!.body);
    expect(result).toEqual({ tool_call_id: 't1', content: { ok: true, result: { transferred: 5000, to: 'ACME' } } });
    // Deciding twice is refused: the call no longer waits.
    expect((await decide(taskId, detail.call_id, 'approve')).status).toBe(404);
    const records = await auditRecords(stack.bus, taskId, 2);
    expect(records.map((r) => r.outcome)).toContain('pending_approval');
    expect(records.find((r) => r.outcome === 'ok')).toMatchObject({ decided_by: 'alice' });
  });

  it('a denied call never runs and the model reads approval_denied', async () => {
    const goal = 'transfer 50 EUR to ACME but get denied';
    model.on(goal, [transfer('t2'), { content: 'The transfer was denied.' }]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId);
    const needed = stepOf(await watch.next((e) => stepOf(e, 'approval_needed') !== undefined), 'approval_needed')!;

    const res = await decide(taskId, (needed.detail as { call_id: string }).call_id, 'deny', 'not this month');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'denied' });
    const events = await watch.done;

    expect(outcomeOf(events).kind).toBe('completed');
    const [denied] = toolMessages(model.requests(goal)[1]!.body);
    expect(denied!.content).toMatchObject({ ok: false, error: { code: 'approval_denied' } });
    expect(denied!.content.error!.message).toMatch(/alice denied.*not this month/);
    expect(ledger.lines(taskId)).toEqual([]);
    expect(steps(events, 'tool_result').map((s) => (s.detail as { error?: string }).error)).toEqual(['approval_denied']);
  });

  it('a call nobody decides ends with approval_timeout', async () => {
    // A toolbus whose parked calls expire after 1.5 s replaces the stack's one for this test.
    const [longWait] = await replicasOf(stack, 'toolbus');
    await longWait!.stop(5000);
    await stack.startReplica('toolbus', 'toolbus-short-approvals', { TOOL_APPROVAL_TIMEOUT_MS: '1500' });
    await waitForToolList(stack.bus, { present: ['confirm_transfer'] });

    const goal = 'transfer 50 EUR to ACME and wait forever';
    model.on(goal, [transfer('t3'), { content: 'Nobody approved.' }]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId);
    const needed = stepOf(await watch.next((e) => stepOf(e, 'approval_needed') !== undefined), 'approval_needed')!;
    const events = await watch.done;

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'Nobody approved.' });
    const [timedOut] = toolMessages(model.requests(goal)[1]!.body);
    expect(timedOut!.content).toMatchObject({ ok: false, error: { code: 'approval_timeout' } });
    expect(ledger.lines(taskId)).toEqual([]);
    // Too late to approve now.
    expect((await decide(taskId, (needed.detail as { call_id: string }).call_id, 'approve')).status).toBe(404);
  });
});

describe('remote tool providers', () => {
  it('a provider in another process serves its tool, and once stopped its tools are gone from the next task', async () => {
    const weather = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger, name: 'weather', tools: ['forecast'], ttlMs: 1500 });
    providers.push(weather);
    const goal = 'will it rain in Lyon tomorrow';
    model.on(goal, [callTools({ id: 'f1', name: 'forecast', arguments: { city: 'Lyon' } }), { content: 'Clear skies.' }]);
    const before = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(before.events).kind).toBe('completed');
    const offeredBefore = offeredTools(model.requests(goal)[0]!.body);
    expect(offeredBefore).toEqual(expect.arrayContaining(['forecast', 'lookup', 'date_add']));
    expect(toolMessages(model.requests(goal)[1]!.body)[0]!.content).toEqual({ ok: true, result: { city: 'Lyon', sky: 'clear' } });

    await weather.stop(3000);
    await waitForToolList(stack.bus, { absent: ['forecast'], present: ['lookup'] });

    const goal2 = 'will it rain in Lyon the day after';
    model.on(goal2, [{ content: 'I have no forecast tool.' }]);
    const after = await runTask(stack.bus, { user_id: 'alice', goal: goal2 });
    expect(outcomeOf(after.events).kind).toBe('completed');
    const offeredAfter = offeredTools(model.requests(goal2)[0]!.body);
    expect(offeredAfter).not.toContain('forecast');
    expect(offeredAfter.sort()).toEqual(offeredBefore.filter((t) => t !== 'forecast').sort());
  });
});

let step = 0;
/** A call as a runtime would send it, but written by the attacker. */
function forged(over: Partial<ToolCallRequest> & Pick<ToolCallRequest, 'task_id' | 'user_id'>): ToolCallRequest {
  step += 1;
  return {
    idempotency_key: `${over.task_id}:forged:${step}:0`,
    subtask_id: 'forged',
    step,
    call_index: 0,
    tool_call_id: `f${step}`,
    roles: ['admin', 'finance'],
    tool: 'restricted_op',
    arguments: JSON.stringify({ account: 'ops-main' }),
    ...over,
  };
}
const callError = (req: ToolCallRequest): Promise<{ reply?: ToolCallReply; error?: Error & { code?: string } }> =>
  request(stack.bus, contracts.toolCall, req).then(
    (reply) => ({ reply }),
    (err: unknown) => ({ error: err as Error & { code?: string } }),
  );

/** Starts a task that parks on a call needing approval, so it stays running while the test forges calls. */
async function runningTask(user: string, goal: string, team?: string): Promise<string> {
  model.on(goal, [callTools({ id: 'park', name: 'confirm_transfer', arguments: { to: 'ACME', amount_cents: 100 } }), { content: 'done' }]);
  const taskId = await submit(stack.bus, { user_id: user, goal }, team);
  await watchTask(stack.bus, taskId, undefined, team).next((e) => stepOf(e, 'approval_needed') !== undefined);
  return taskId;
}

// Issue 17: the toolbus trusted the roles and task a call carried, so anyone able to publish on
// the toolCall subject (a compromised runtime) had every role. Now the task record decides: each
// forged call below is refused, and nothing reaches the provider.
describe('tool calls are checked against the task record', () => {
  it("a call forged with roles ['admin', 'finance'] for a user's task is refused for a role-restricted tool", async () => {
    const taskId = await runningTask('alice', 'park for forged roles');
    const { reply } = await callError(forged({ task_id: taskId, user_id: 'alice' }));
    expect(reply).toMatchObject({ status: 'error', error: { code: 'tool_forbidden', message: expect.stringContaining('finance') } });
    // fiona has the role in the dispatcher's table: her task's call runs even though the call claims no roles.
    const fionas = await runningTask('fiona', 'park for real roles');
    expect((await callError(forged({ task_id: fionas, user_id: 'fiona', roles: [] }))).reply).toMatchObject({ status: 'ok' });
    expect(ledger.lines(taskId)).toEqual([]);
    expect(ledger.lines(fionas)).toEqual([expect.objectContaining({ tool: 'restricted_op', user_id: 'fiona', roles: ['user', 'finance'] })]);
  });

  it('a call for an unknown task, for another user’s task, or for an ended task is refused with a structured error', async () => {
    const unknown = await callError(forged({ task_id: 't_00000000000000000000000000000000', user_id: 'alice' }));
    expect(unknown.error).toMatchObject({ code: 'not_found', message: expect.stringContaining('there is no task') });
    const taskId = await runningTask('alice', 'park for ownership');
    expect((await callError(forged({ task_id: taskId, user_id: 'fiona' }))).error).toMatchObject({ code: 'forbidden' });
    await request(stack.bus, contracts.taskCancel, { task_id: taskId });
    // The toolbus keeps a live task's record for TOOL_TASK_CACHE_MS (2 s): poll past it, the generous bound is for a loaded machine.
    await expect
      .poll(async () => (await callError(forged({ task_id: taskId, user_id: 'alice', tool: 'lookup', arguments: '{"id":"INV-1"}' }))).error?.code, {
        timeout: 10_000,
        interval: 250,
      })
      .toBe('task_ended');
    expect(ledger.lines(taskId)).toEqual([]);
  });

  it("a team's task: its calls run with the roles of its owner (team, user), and the same user id of another team is another user", async () => {
    // team-t/alice has finance in the dispatcher's table; alice of the default team does not.
    const taskId = await runningTask('alice', 'park for a team task', 'team-t');
    expect((await callError(forged({ task_id: taskId, user_id: 'alice', team: 'team-t', roles: [] }))).reply).toMatchObject({ status: 'ok' });
    expect(ledger.lines(taskId)).toEqual([expect.objectContaining({ tool: 'restricted_op', user_id: 'alice', roles: ['user', 'finance'] })]);
    // The default team's alice (no team in the call) is not the owner of team-t's task.
    expect((await callError(forged({ task_id: taskId, user_id: 'alice' }))).error).toMatchObject({ code: 'forbidden' });
    expect((await callError(forged({ task_id: taskId, user_id: 'alice', team: 'team-u' }))).error).toMatchObject({ code: 'forbidden' });
    expect(ledger.lines(taskId)).toHaveLength(1);
  });
});
