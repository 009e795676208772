import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalListReply,
  LlmPoolsReply,
  McpApproveChangeReply,
  MemoryForgetOneReply,
  MemoryListReply,
  McpStatusReply,
  ProblemDetails,
  TaskAuditView,
  TaskListReply,
  TaskPlanView,
  ToolsListReply,
  validate,
  type PendingApproval,
} from '@hermes/contracts';
import type { TSchema, Static } from '@sinclair/typebox';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { ADMIN_KEY, API_KEY, BOB_KEY } from './stack.js';
import { callTools } from './model-script.js';
import { outcomeOf, stepOf, submit, watchTask } from './tasks.js';
import { withToolProvider, type ToolStack } from './tool-fixtures.js';

// The API the console is built on, against the real services: pending approvals (listed and
// streamed), a task's plan, tools, MCP servers and LLM pools, each checked against its contract
// schema, and each seen only by whom it concerns. On the shared stack: assertions look at this
// file's own tasks only (other files may park calls of alice's at the same time).
let fx: ToolStack;
let stack: SharedStack;

beforeAll(async () => {
  fx = await withToolProvider(await sharedStack());
  stack = fx.stack;
}, 90_000);

afterAll(() => fx?.stop());

/** GETs a gateway path as the key's user; the body is checked against `schema` when the answer is 200. */
async function get<S extends TSchema>(path: string, key: string, schema: S): Promise<{ status: number; body: Static<S> }> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const json: unknown = await res.json();
  const checked = validate(res.status === 200 ? schema : ProblemDetails, json);
  if (!checked.ok) throw new Error(`${path} answered ${res.status} with a body off its schema: ${JSON.stringify(checked.issues)}`);
  return { status: res.status, body: json as Static<S> };
}

/** Follows `GET /v1/approvals/events`, keeping every `approvals` list it sends. */
async function followApprovals(key: string) {
  const abort = new AbortController();
  const res = await fetch(`${stack.gatewayUrl}/v1/approvals/events`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const lists: PendingApproval[][] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!/^event: approvals$/m.test(frame)) continue;
        const data = JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as unknown;
        const checked = validate(ApprovalListReply, data);
        if (!checked.ok) throw new Error(`approvals event off its schema: ${JSON.stringify(checked.issues)}`);
        lists.push(checked.value.approvals);
      }
    }
  })().catch(() => undefined);
  return { lists, close: () => abort.abort() };
}

// Deadlines are generous: ten processes share a 2-core machine with other test runs.
const POLL = { timeout: 20_000, interval: 100 };

describe('approvals for the console', () => {
  it('lists and streams a parked call to its owner and an admin, never to another user, and drops it once approved from HTTP', async () => {
    const goal = 'console: transfer 50 EUR to ACME after approval';
    fx.model.on(goal, [callTools({ id: 'c1', name: 'confirm_transfer', arguments: { to: 'ACME', amount_cents: 5000 } }), { content: 'Transferred.' }]);
    const aliceFeed = await followApprovals(API_KEY);
    const bobFeed = await followApprovals(BOB_KEY);
    try {
      // Each stream starts with the list as it is.
      await expect.poll(() => aliceFeed.lists.length, POLL).toBeGreaterThan(0);
      await expect.poll(() => bobFeed.lists.length, POLL).toBeGreaterThan(0);
      const taskId = await submit(stack.bus, { user_id: 'alice', goal });
      const watch = watchTask(stack.bus, taskId);
      const needed = stepOf(await watch.next((e) => stepOf(e, 'approval_needed') !== undefined), 'approval_needed')!;
      const callId = (needed.detail as { call_id: string }).call_id;

      const expected = {
        call_id: callId,
        task_id: taskId,
        team: 'default',
        user_id: 'alice',
        tool: 'confirm_transfer',
        arguments: { to: 'ACME', amount_cents: 5000 },
      };
      const mine = (approvals: PendingApproval[] | undefined) => (approvals ?? []).filter((a) => a.task_id === taskId);
      await expect
        .poll(async () => mine((await get('/v1/approvals', API_KEY, ApprovalListReply)).body.approvals), POLL)
        .toEqual([expect.objectContaining(expected)]);
      expect(mine((await get('/v1/approvals', ADMIN_KEY, ApprovalListReply)).body.approvals)).toEqual([expect.objectContaining(expected)]);
      expect(mine((await get('/v1/approvals', BOB_KEY, ApprovalListReply)).body.approvals)).toEqual([]);
      // The live stream shows it without anyone asking again.
      await expect.poll(() => mine(aliceFeed.lists.at(-1)), POLL).toEqual([expect.objectContaining(expected)]);

      const decided = await fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}/approvals/${encodeURIComponent(callId)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve', reason: 'checked the invoice' }),
      });
      expect(decided.status).toBe(200);
      await expect.poll(() => mine(aliceFeed.lists.at(-1)), POLL).toEqual([]);
      expect(outcomeOf(await watch.done)).toEqual({ kind: 'completed', output: 'Transferred.' });
      expect(mine((await get('/v1/approvals', API_KEY, ApprovalListReply)).body.approvals)).toEqual([]);
      // Bob's stream never carried alice's call.
      expect(bobFeed.lists.flat().map((a) => a.call_id)).not.toContain(callId);

      // The task's tool audit: the parked attempt and the approved run, with who decided, for the
      // owner and an admin; another user gets the same 404 as for a task that does not exist.
      const audit = await get(`/v1/tasks/${taskId}/audit`, API_KEY, TaskAuditView);
      expect(audit.status).toBe(200);
      expect(audit.body.task_id).toBe(taskId);
      // (A settled call the runtime asks for again is audited once more, so the count of ok records is not asserted.)
      const records = audit.body.records;
      expect(records[0]).toMatchObject({ tool: 'confirm_transfer', outcome: 'pending_approval', call_id: callId, user_id: 'alice' });
      expect(JSON.parse(records[0]!.arguments)).toEqual({ to: 'ACME', amount_cents: 5000 });
      expect(records.find((r) => r.outcome === 'ok')).toMatchObject({
        tool: 'confirm_transfer',
        call_id: callId,
        decided_by: expect.stringContaining('alice'),
      });
      expect(records.every((r) => r.task_id === taskId)).toBe(true);
      expect((await get(`/v1/tasks/${taskId}/audit`, ADMIN_KEY, TaskAuditView)).body.records).toEqual(records);
      expect(await get(`/v1/tasks/${taskId}/audit`, BOB_KEY, TaskAuditView)).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await get('/v1/tasks/no-such-task/audit', API_KEY, TaskAuditView)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    } finally {
      aliceFeed.close();
      bobFeed.close();
    }
  }, 60_000);
});

describe('task plan, tools, MCP servers and LLM pools', () => {
  it("answers a task's plan to its owner and an admin, and 404 to another user", async () => {
    const goal = 'console: what is the plan';
    fx.model.on(goal, [{ content: 'Done.' }]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(await watchTask(stack.bus, taskId).done).kind).toBe('completed');

    const { status, body } = await get(`/v1/tasks/${taskId}/plan`, API_KEY, TaskPlanView);
    expect(status).toBe(200);
    // PLAN_MODE=single (the e2e stock setting): the goal is the plan's one subtask.
    expect(body).toMatchObject({ task_id: taskId, status: 'completed', plan: { origin: 'single' } });
    expect(body.plan!.subtasks.map((s) => s.status)).toEqual(['succeeded']);
    expect((await get(`/v1/tasks/${taskId}/plan`, ADMIN_KEY, TaskPlanView)).status).toBe(200);
    expect(await get(`/v1/tasks/${taskId}/plan`, BOB_KEY, TaskPlanView)).toMatchObject({ status: 404, body: { code: 'not_found' } });

    // The task's LLM call went through a pool of the cluster-wide semaphore; memory's extraction
    // may be using one at this moment, so only the bounds are asserted.
    const pools = await get('/v1/llm/pools', BOB_KEY, LlmPoolsReply);
    expect(pools.status).toBe(200);
    expect(pools.body.pools.length).toBeGreaterThan(0);
    for (const pool of pools.body.pools) {
      expect(pool.capacity).toBeGreaterThanOrEqual(1);
      expect(pool.in_use).toBeLessThanOrEqual(pool.capacity);
    }
  }, 60_000);

  it('lists the tools the caller may use: the role-restricted one only for a key with the role', async () => {
    const names = async (key: string) => (await get('/v1/tools', key, ToolsListReply)).body.tools.map((t) => t.name);
    const alice = await names(API_KEY);
    expect(alice).toEqual(expect.arrayContaining(['time_now', 'echo', 'confirm_transfer', 'lookup']));
    // restricted_op needs the finance role, which none of these keys has.
    expect(alice).not.toContain('restricted_op');
  });

  it('shows the MCP servers to an admin only', async () => {
    const admin = await get('/v1/mcp/servers', ADMIN_KEY, McpStatusReply);
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ servers: [], problems: [] });
    expect(await get('/v1/mcp/servers', API_KEY, McpStatusReply)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it('approve-change is for admins only, refuses a malformed server name, and answers the toolbus refusing an unknown server', async () => {
    const post = async (path: string, key: string) => {
      const res = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      const json: unknown = await res.json();
      const checked = validate(res.status === 200 ? McpApproveChangeReply : ProblemDetails, json);
      if (!checked.ok) throw new Error(`${path} answered ${res.status} off its schema: ${JSON.stringify(checked.issues)}`);
      return { status: res.status, type: res.headers.get('content-type'), body: json as Record<string, unknown> };
    };
    expect(await post('/v1/mcp/servers/files/approve-change', API_KEY)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await post('/v1/mcp/servers/bad.name/approve-change', ADMIN_KEY)).toMatchObject({
      status: 400,
      type: expect.stringMatching(/^application\/problem\+json/),
      body: { code: 'invalid_server', retryable: false },
    });
    // The request reached the toolbus, which has no MCP server of that name in this stack.
    expect(await post('/v1/mcp/servers/no-such-server/approve-change?tool=x', ADMIN_KEY)).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('filters the task list by since and until in the dispatcher before paging, and answers bad times as problem details', async () => {
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const goal = `console api: time filter ${n}`;
      fx.model.on(goal, [{ content: `Done ${n}.` }]);
      const res = await fetch(`${stack.gatewayUrl}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ goal }),
      });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { task_id: string }).task_id);
    }
    const list = (q: string) => get(`/v1/tasks?${q}`, API_KEY, TaskListReply);
    // Both accepted: the dispatcher lists a task once it holds its state.
    let created: Record<string, string> = {};
    await expect
      .poll(
        async () => {
          created = Object.fromEntries((await list('limit=200')).body.tasks.map((t) => [t.task_id, t.created_at]));
          return ids.every((id) => created[id]);
        },
        { timeout: 30_000, interval: 200 },
      )
      .toBe(true);
    const [first, second] = ids.map((id) => Date.parse(created[id]!));
    const at = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    const listed = async (q: string) => (await list(q)).body.tasks.map((t) => t.task_id);

    expect(await listed(`since=${at(first!)}&limit=200`)).toEqual(expect.arrayContaining(ids));
    expect(await listed(`since=${at(second! + 1)}&limit=200`)).not.toContain(ids[1]);
    expect(await listed(`until=${at(first! - 1)}&limit=200`)).not.toContain(ids[0]);
    // A page of one, ending at the first task's creation: filtered before paging, so it is that task,
    // not an empty page cut from the newest tasks (the second is newer).
    if (second! > first!) expect(await listed(`until=${at(first!)}&since=${at(first!)}&limit=1`)).toEqual([ids[0]]);
    // The same instant with another offset is the same filter.
    const plusTwo = new Date(first! + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(await listed(`since=${encodeURIComponent(plusTwo)}&until=${at(first!)}&limit=200`)).toEqual([ids[0]]);

    const bad = await list('since=yesterday');
    expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_query', status: 400 } });
    const empty = await list(`since=${at(second!)}&until=${at(first! - 1000)}`);
    expect(empty).toMatchObject({ status: 400, body: { code: 'invalid_time_range' } });
  }, 60_000);

  it('filters the task list by user in the dispatcher: an admin names anyone of the team, a user only themselves (403 for another)', async () => {
    const submitAs = async (key: string, goal: string) => {
      fx.model.on(goal, [{ content: 'Done.' }]);
      const res = await fetch(`${stack.gatewayUrl}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ goal }),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { task_id: string }).task_id;
    };
    const bobs = await submitAs(BOB_KEY, 'console api: bob for the user filter');
    const alices = await submitAs(API_KEY, 'console api: alice for the user filter');
    const ids = async (q: string, key = ADMIN_KEY) => (await get(`/v1/tasks?${q}`, key, TaskListReply)).body.tasks;
    await expect.poll(async () => (await ids('user=bob&limit=200')).map((t) => t.task_id), { timeout: 30_000, interval: 200 }).toContain(bobs);
    const onlyBob = await ids('user=bob&limit=200');
    expect(new Set(onlyBob.map((t) => t.user_id))).toEqual(new Set(['bob']));
    // user wins over all=true: still bob's only.
    expect(new Set((await ids('user=bob&all=true&limit=200')).map((t) => t.user_id))).toEqual(new Set(['bob']));
    await expect.poll(async () => (await ids('user=alice&limit=200', API_KEY)).map((t) => t.task_id), { timeout: 30_000, interval: 200 }).toContain(alices);
    expect(await get('/v1/tasks?user=bob', API_KEY, TaskListReply)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await get('/v1/tasks?user=bad%2Fid', ADMIN_KEY, TaskListReply)).toMatchObject({ status: 400, body: { code: 'invalid_query' } });
  }, 60_000);
});

describe('forgetting one memory over HTTP', () => {
  // Bob's and the admin's memories: the browser test on this shared stack forgets all of alice's.
  const remember = async (key: string, id: string, content: string) => {
    const goal = `console api: remember ${id}`;
    fx.model.on(goal, [callTools({ id, name: 'remember', arguments: { content } }), { content: 'Noted.' }]);
    const res = await fetch(`${stack.gatewayUrl}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ goal }),
    });
    expect(res.status).toBe(202);
  };
  const memoriesOf = async (user: string) => (await get(`/v1/users/${user}/memory?limit=1000`, ADMIN_KEY, MemoryListReply)).body.memories;
  const idOf = async (user: string, content: string) => (await memoriesOf(user)).find((m) => m.content === content)?.memory_id;
  const forget = async (path: string, key: string) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
    const json: unknown = await res.json();
    const checked = validate(res.status === 200 ? MemoryForgetOneReply : ProblemDetails, json);
    if (!checked.ok) throw new Error(`${path} answered ${res.status} off its schema: ${JSON.stringify(checked.issues)}`);
    return { status: res.status, type: res.headers.get('content-type'), body: json as Record<string, unknown> };
  };

  it("forgets the caller's own memory and keeps the others; another user's id and an unknown id are 404 and remove nothing", async () => {
    const facts = { bobBike: 'Bob rides a blue bicycle to the office', bobTea: 'Bob drinks rooibos in the afternoon', ops: 'Ops keeps the pager on weekends' };
    await remember(BOB_KEY, 'fm-bike', facts.bobBike);
    await remember(BOB_KEY, 'fm-tea', facts.bobTea);
    await remember(ADMIN_KEY, 'fm-ops', facts.ops);
    // The remember writes are queued: wait until all three are stored.
    const ids = { bike: '', tea: '', ops: '' };
    await expect
      .poll(
        async () => {
          ids.bike = (await idOf('bob', facts.bobBike)) ?? '';
          ids.tea = (await idOf('bob', facts.bobTea)) ?? '';
          ids.ops = (await idOf('ops', facts.ops)) ?? '';
          return Boolean(ids.bike && ids.tea && ids.ops);
        },
        { timeout: 30_000, interval: 200 },
      )
      .toBe(true);

    expect(await forget(`/v1/users/bob/memory/${ids.bike}`, BOB_KEY)).toMatchObject({ status: 200, body: { memory_id: ids.bike, forgotten: true } });
    const bobs = (await memoriesOf('bob')).map((m) => m.content);
    expect(bobs).not.toContain(facts.bobBike);
    expect(bobs).toContain(facts.bobTea);

    // The admin's memory named under bob's path is not bob's: 404, and it stays.
    const others = await forget(`/v1/users/bob/memory/${ids.ops}`, BOB_KEY);
    expect(others).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(others.type).toMatch(/^application\/problem\+json/);
    expect(await forget('/v1/users/bob/memory/m_never_written', BOB_KEY)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await forget(`/v1/users/ops/memory/${ids.ops}`, BOB_KEY)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await idOf('ops', facts.ops)).toBe(ids.ops);

    // An admin may forget anyone's: bob's other memory goes, the admin's own stays.
    expect(await forget(`/v1/users/bob/memory/${ids.tea}`, ADMIN_KEY)).toMatchObject({ status: 200 });
    expect(await idOf('bob', facts.bobTea)).toBeUndefined();
    expect(await idOf('ops', facts.ops)).toBe(ids.ops);
  }, 90_000);
});
