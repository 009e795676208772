import { Bus } from '@hermes/bus';
import { teamOfSubject, DEFAULT_TEAM, requestDigest, taskIdFor, type TaskSubmitEvent } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayServer, type GatewayServer } from '../src/index.js';
import { openSse } from './support/sse-client.js';
import { standInDispatcher } from './support/stand-in-dispatcher.js';
import { ADMIN, ADMIN_OF_B, ALICE, ALICE_OF_B, BOB, apiKeys, logger } from './support/test-keys.js';
import { natsHandles } from '@hermes/bus/internal';

let natsUrl: string;
let bus: Bus;
let gateway: GatewayServer;
let base: string;
let dispatcher: ReturnType<typeof standInDispatcher>;

beforeAll(async () => {
  const nats = await startNatsServer();
  natsUrl = nats.url;
  bus = await Bus.connect({ servers: nats.url, name: 'gateway-test', logger });
  await bus.ensureStreams(['taskSubmit', 'taskEvents']);
  dispatcher = standInDispatcher(bus);
  gateway = createGatewayServer({ bus, apiKeys, logger, keepAliveMs: 100 });
  const { port } = await gateway.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await gateway?.close();
  await bus?.drain();
  await cleanupAll();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function post(body: unknown, headers: Record<string, string> = auth(ALICE)) {
  const res = await fetch(`${base}/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { res, json: (await res.json()) as ApiBody };
}

/** The fields of a gateway response these tests read (a success or an error body). */
interface ApiBody {
  task_id: string;
  status: string;
  duplicate: boolean;
  links: Record<string, string>;
  // An error is RFC 9457 problem details with the Hermes members.
  type: string;
  title: string;
  detail: string;
  code: string;
  retryable: boolean;
  issues?: { path: string; keyword?: string }[];
  details?: Record<string, unknown>;
}

/** Every submission stored in the submit stream for one task id (read back from JetStream). */
async function storedSubmissions(taskId: string): Promise<TaskSubmitEvent[]> {
  const info = await natsHandles(bus).jsm.streams.info(bus.subjects.streams.taskSubmit);
  const found: TaskSubmitEvent[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await natsHandles(bus).jsm.streams.getMessage(bus.subjects.streams.taskSubmit, { seq });
    const event = msg?.json<TaskSubmitEvent>();
    const team = msg ? teamOfSubject(msg.subject, bus.subjects.taskSubmitLegacy) : undefined;
    if (event && team && taskIdFor(team, event.source, event.id) === taskId) found.push(event);
  }
  return found;
}

describe('authentication', () => {
  it('answers 401 with a Bearer challenge when no key is sent', async () => {
    const { res, json } = await post({ goal: 'x' }, {});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(json.code).toBe('unauthorized');
  });

  it('answers 401 invalid_token for an unknown key', async () => {
    const { res, json } = await post({ goal: 'x' }, auth('not-a-configured-key-000000'));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(json.code).toBe('unauthorized');
  });
});

describe('POST /v1/tasks', () => {
  it('rejects a body that is not JSON with 400 invalid_json', async () => {
    const { res, json } = await post('{"goal": ');
    expect(res.status).toBe(400);
    expect(json.code).toBe('invalid_json');
  });

  it('rejects a body that fails the TaskRequest schema with 400 and every issue', async () => {
    const { res, json } = await post({ goal: '', colour: 'red' });
    expect(res.status).toBe(400);
    expect(json.code).toBe('invalid_payload');
    const paths = (json.issues ?? []).map((i) => i.path);
    expect(paths).toContain('/goal');
    expect(paths).toContain('/colour');
    expect(JSON.stringify(json)).not.toMatch(/at .*\.ts:\d+/);
  });

  it('publishes a CloudEvent to the submit stream with the user taken from the key', async () => {
    const { res, json } = await post({ goal: 'summarise the report' });
    expect(res.status).toBe(202);
    expect(json).toMatchObject({ status: 'submitted', duplicate: false });
    expect(json.task_id).toMatch(/^t_[0-9a-f]{32}$/);
    expect(res.headers.get('location')).toBe(`/v1/tasks/${json.task_id}`);
    expect(json.links).toEqual({ self: `/v1/tasks/${json.task_id}`, events: `/v1/tasks/${json.task_id}/events` });

    const [event, ...more] = await storedSubmissions(json.task_id);
    expect(more).toHaveLength(0);
    expect(event).toMatchObject({ specversion: '1.0', type: 'io.hermes.task.submit', source: '/hermes/gateway/alice' });
    expect(event!.data).toEqual({ user_id: 'alice', goal: 'summarise the report' });
  });

  it('treats a retried POST with the same Idempotency-Key as the same task, stored once', async () => {
    const headers = { ...auth(ALICE), 'idempotency-key': 'order-42-attempt' };
    const first = await post({ goal: 'book the meeting room' }, headers);
    const second = await post({ goal: 'book the meeting room' }, headers);
    expect(first.res.status).toBe(202);
    expect(first.json.duplicate).toBe(false);
    expect(second.res.status).toBe(200);
    expect(second.json).toMatchObject({ task_id: first.json.task_id, duplicate: true });
    const stored = await storedSubmissions(first.json.task_id);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.id).toBe('order-42-attempt');
  });

  it('answers 422 duplicate_conflict for an Idempotency-Key re-used with another body, and 200 for the same body, publishing neither', async () => {
    const taskId = taskIdFor(DEFAULT_TEAM, '/hermes/gateway/alice', 'order-77');
    dispatcher.addTask(taskId, 'alice', { request_digest: requestDigest({ user_id: 'alice', goal: 'pay invoice 1' }) });
    const headers = { ...auth(ALICE), 'idempotency-key': 'order-77' };

    const conflict = await post({ goal: 'pay invoice 2' }, headers);
    expect(conflict.res.status).toBe(422);
    expect(conflict.json).toMatchObject({ code: 'duplicate_conflict', details: { task_id: taskId } });
    const same = await post({ goal: 'pay invoice 1' }, headers);
    expect(same.res.status).toBe(200);
    expect(same.json).toMatchObject({ task_id: taskId, duplicate: true });
    expect(await storedSubmissions(taskId)).toEqual([]);
  });

  it('scopes Idempotency-Keys to the caller', async () => {
    const a = await post({ goal: 'g' }, { ...auth(ALICE), 'idempotency-key': 'shared-key' });
    const b = await post({ goal: 'g' }, { ...auth(BOB), 'idempotency-key': 'shared-key' });
    expect(b.res.status).toBe(202);
    expect(b.json.task_id).not.toBe(a.json.task_id);
  });

  it('answers 403 when a non-admin submits for another user, and lets an admin do it', async () => {
    const forbidden = await post({ user_id: 'bob', goal: 'read bob mail' });
    expect(forbidden.res.status).toBe(403);
    expect(forbidden.json.code).toBe('forbidden');

    const allowed = await post({ user_id: 'bob', goal: 'read bob mail' }, auth(ADMIN));
    expect(allowed.res.status).toBe(202);
    const [event] = await storedSubmissions(allowed.json.task_id);
    expect(event!.data.user_id).toBe('bob');
  });

  it('answers 413 payload_limit naming maxBytes for a body over 1 MiB', async () => {
    const { res, json } = await post({ goal: 'x'.repeat(1024 * 1024 + 10) });
    expect(res.status).toBe(413);
    expect(json).toMatchObject({ code: 'payload_limit', retryable: false, details: { limit: 'maxBytes', max: 1024 * 1024 } });
  });

  it('answers 400 payload_limit, not retryable, for inputs nested 5,000 deep, naming the limit and path', async () => {
    const inputs = `${'{"a":'.repeat(4999)}{}${'}'.repeat(4999)}`;
    const { res, json } = await post(`{"goal":"deep","inputs":${inputs}}`);
    expect(res.status).toBe(400);
    expect(json).toMatchObject({ code: 'payload_limit', retryable: false, details: { limit: 'maxDepth', max: 34, actual: 5001 } });
    expect(json.details?.path).toBe(`/inputs${'/a'.repeat(33)}`);
    expect(json.issues).toEqual([expect.objectContaining({ keyword: 'maxDepth' })]);
  });

  it('answers 400 for inputs one level over the inputs depth limit, naming the inputs limit', async () => {
    let deep: unknown = {};
    for (let i = 1; i < 32; i++) deep = { a: deep };
    const { res, json } = await post({ goal: 'deep', inputs: { a: deep } });
    expect(res.status).toBe(400);
    expect(json).toMatchObject({ code: 'payload_limit', details: { limit: 'maxDepth', max: 32, actual: 33, path: `/inputs${'/a'.repeat(32)}` } });
  });

  it('answers 400 for prototype-pollution keys and for bad UTF-8, never 5xx', async () => {
    const polluted = await post('{"goal":"x","inputs":{"__proto__":{"admin":true}}}');
    expect(polluted.res.status).toBe(400);
    expect(polluted.json).toMatchObject({ code: 'payload_limit', details: { limit: 'forbiddenKey', path: '/inputs/__proto__' } });
    const res = await fetch(`${base}/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(ALICE) },
      body: Uint8Array.from([...new TextEncoder().encode('{"goal":"'), 0xff, 0xfe, ...new TextEncoder().encode('"}')]),
    });
    expect(res.status).toBe(400);
    expect((await res.json()) as ApiBody).toMatchObject({ code: 'invalid_json', retryable: false });
  });

  it('answers 413 for an oversized chunked body without buffering it', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 32) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${base}/v1/tasks`, { method: 'POST', headers: auth(ALICE), body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
  });

  it('answers 400 for an Idempotency-Key that cannot be an event id', async () => {
    const { res, json } = await post({ goal: 'x' }, { ...auth(ALICE), 'idempotency-key': 'x'.repeat(300) });
    expect(res.status).toBe(400);
    expect(json.code).toBe('invalid_idempotency_key');
  });
});

describe('request log', () => {
  it("names the caller (as user_id) and the task (the new one for a submission, the path's otherwise) on each request line", async () => {
    const lines: string[] = [];
    const captured = createLogger({ service: 'gateway-test', level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    const other = createGatewayServer({ bus, apiKeys, logger: captured });
    const { port } = await other.listen({ port: 0, host: '127.0.0.1' });
    try {
      const submitted = (await (
        await fetch(`http://127.0.0.1:${port}/v1/tasks`, { method: 'POST', headers: auth(ALICE), body: '{"goal":"log me"}' })
      ).json()) as { task_id: string };
      dispatcher.addTask('t_log_1', 'alice');
      await fetch(`http://127.0.0.1:${port}/v1/tasks/t_log_1`, { headers: auth(ALICE) });
      await fetch(`http://127.0.0.1:${port}/v1/tasks/t_log_1/approvals/c_1`, { method: 'POST', headers: auth(ALICE), body: '{"decision":"approve"}' });
      const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
      expect(requests).toEqual([
        expect.objectContaining({ method: 'POST', route: '/v1/tasks', user_id: 'alice', task_id: submitted.task_id }),
        expect.objectContaining({ method: 'GET', route: '/v1/tasks/:id', user_id: 'alice', task_id: 't_log_1', status: 200 }),
        expect.objectContaining({ method: 'POST', route: '/v1/tasks/:id/approvals/:call_id', user_id: 'alice', task_id: 't_log_1', call_id: 'c_1' }),
      ]);
    } finally {
      await other.close();
    }
  });
});

describe('routing', () => {
  it('answers 404 for an unknown route and 405 with Allow for a wrong method', async () => {
    const missing = await fetch(`${base}/v2/things`, { headers: auth(ALICE) });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('not_found');

    const wrong = await fetch(`${base}/v1/tasks`, { method: 'PUT', headers: auth(ALICE) });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST, GET');
  });
});

describe('GET /v1/tasks/:id', () => {
  it('returns the TaskView the dispatcher reports', async () => {
    const view = dispatcher.addTask('t_view_1', 'alice', { status: 'running', attempts: 1 });
    const res = await fetch(`${base}/v1/tasks/t_view_1`, { headers: auth(ALICE) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(view);
  });

  it("answers 404 for an unknown task and for another user's task, but an admin sees it", async () => {
    dispatcher.addTask('t_view_2', 'bob');
    const unknown = await fetch(`${base}/v1/tasks/t_nope`, { headers: auth(ALICE) });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('not_found');
    expect((await fetch(`${base}/v1/tasks/t_view_2`, { headers: auth(ALICE) })).status).toBe(404);
    expect((await fetch(`${base}/v1/tasks/t_view_2`, { headers: auth(ADMIN) })).status).toBe(200);
  });

  it('answers 400 for a task id that is not an Id', async () => {
    const res = await fetch(`${base}/v1/tasks/bad.id`, { headers: auth(ALICE) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_task_id');
  });
});

describe('GET /v1/tasks/:id/events', () => {
  const accepted = (taskId: string) => ({ task_id: taskId, user_id: 'alice', session_id: 's1', goal: 'g', source_event: {} });
  const step = (taskId: string, n: number) => ({ task_id: taskId, subtask_id: 'st1', step: n, kind: 'llm_call' as const, model: 'm' });
  const completed = (taskId: string) => ({ task_id: taskId, result: { output: 'done' }, usage: { input_tokens: 3, output_tokens: 4 } });

  it('replays stored events, follows live ones and ends after the terminal event', async () => {
    const id = 't_sse_1';
    dispatcher.addTask(id, 'alice');
    const seqAccepted = await dispatcher.publish('accepted', id, accepted(id));
    const seqStarted = await dispatcher.publish('started', id, { task_id: id, subtask_id: 'st1', attempt: 1 });

    const sse = await openSse(`${base}/v1/tasks/${id}/events`, auth(ALICE));
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await sse.next();
    expect(first).toMatchObject({ id: String(seqAccepted), event: 'accepted' });
    expect(JSON.parse(first.data)).toMatchObject({ type: 'io.hermes.task.accepted', subject: id });
    expect(await sse.next()).toMatchObject({ id: String(seqStarted), event: 'started' });

    const seqStep = await dispatcher.publish('step', id, step(id, 1));
    expect(await sse.next()).toMatchObject({ id: String(seqStep), event: 'step' });
    await dispatcher.publish('completed', id, completed(id));
    const last = await sse.next();
    expect(last.event).toBe('completed');
    expect(JSON.parse(last.data).data.result.output).toBe('done');
    const all = await sse.ended;
    expect(all.map((f) => f.event)).toEqual(['accepted', 'started', 'step', 'completed']);
  });

  it('resumes after Last-Event-ID', async () => {
    const id = 't_sse_2';
    dispatcher.addTask(id, 'alice');
    const seqAccepted = await dispatcher.publish('accepted', id, accepted(id));
    await dispatcher.publish('step', id, step(id, 1));
    await dispatcher.publish('completed', id, completed(id));
    const sse = await openSse(`${base}/v1/tasks/${id}/events`, { ...auth(ALICE), 'last-event-id': String(seqAccepted) });
    expect((await sse.ended).map((f) => f.event)).toEqual(['step', 'completed']);
  });

  it('answers 204 to a client that reconnects after the terminal event, so EventSource stops', async () => {
    const id = 't_sse_8';
    dispatcher.addTask(id, 'alice', { status: 'completed' });
    await dispatcher.publish('accepted', id, accepted(id));
    const seqCompleted = await dispatcher.publish('completed', id, completed(id));
    const res = await fetch(`${base}/v1/tasks/${id}/events`, { headers: { ...auth(ALICE), 'last-event-id': String(seqCompleted) } });
    expect(res.status).toBe(204);
    const replay = await openSse(`${base}/v1/tasks/${id}/events`, auth(ALICE));
    expect((await replay.ended).map((f) => f.event)).toEqual(['accepted', 'completed']);
  });

  it('sends keep-alive comments while the task is quiet', async () => {
    const id = 't_sse_3';
    dispatcher.addTask(id, 'alice');
    const sse = await openSse(`${base}/v1/tasks/${id}/events`, auth(ALICE));
    await new Promise((r) => setTimeout(r, 350));
    expect(sse.raw()).toContain(': keep-alive\n\n');
    sse.close();
  });

  it('stops following when the client disconnects', async () => {
    // The request is logged once its handler returns, which only happens when the follower stops.
    const lines: string[] = [];
    const captured = createLogger({ service: 'gateway-test', level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    const other = createGatewayServer({ bus, apiKeys, logger: captured });
    const { port } = await other.listen({ port: 0, host: '127.0.0.1' });
    const id = 't_sse_7';
    dispatcher.addTask(id, 'alice');
    const finished = () =>
      lines.map((l) => JSON.parse(l) as { msg: string; route?: string }).filter((l) => l.msg === 'request' && l.route === '/v1/tasks/:id/events');
    try {
      const sse = await openSse(`http://127.0.0.1:${port}/v1/tasks/${id}/events`, auth(ALICE));
      await dispatcher.publish('accepted', id, accepted(id));
      await sse.next();
      expect(finished()).toHaveLength(0);
      sse.close();
      await expect.poll(() => finished().length, { timeout: 5000, interval: 50 }).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('stops waiting for acceptance when the client disconnects', async () => {
    const lines: string[] = [];
    const captured = createLogger({ service: 'gateway-test', level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    const other = createGatewayServer({ bus, apiKeys, logger: captured, acceptWaitMs: 10_000 });
    const { port } = await other.listen({ port: 0, host: '127.0.0.1' });
    const abort = new AbortController();
    try {
      const pending = fetch(`http://127.0.0.1:${port}/v1/tasks/t_sse_9/events`, { headers: auth(ALICE), signal: abort.signal });
      setTimeout(() => abort.abort(), 200);
      await expect(pending).rejects.toThrow();
      setTimeout(() => dispatcher.addTask('t_sse_9', 'alice'), 200);
      await expect.poll(() => lines.some((l) => l.includes('"route":"/v1/tasks/:id/events"')), { timeout: 3000, interval: 50 }).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('waits for a just-submitted task to be accepted before streaming', async () => {
    const id = 't_sse_4';
    setTimeout(() => {
      dispatcher.addTask(id, 'alice');
      void dispatcher.publish('cancelled', id, { task_id: id, reason: 'test' });
    }, 700);
    const sse = await openSse(`${base}/v1/tasks/${id}/events`, auth(ALICE));
    expect(sse.status).toBe(200);
    expect((await sse.ended).map((f) => f.event)).toEqual(['cancelled']);
    // One read before the task existed and one after its first event: the wait follows the
    // event stream. Polling every 200 ms made about four reads in those 700 ms.
    expect(dispatcher.readsOf(id)).toBe(2);
  });

  it("answers another user's task with events after the same wait as a task that never appears", async () => {
    dispatcher.addTask('t_sse_10', 'bob');
    await dispatcher.publish('cancelled', 't_sse_10', { task_id: 't_sse_10', reason: 'test' });
    const started = Date.now();
    const res = await fetch(`${base}/v1/tasks/t_sse_10/events`, { headers: auth(ALICE) });
    expect(res.status).toBe(404);
    // The acceptance wait is 3 s; a quicker 404 would tell alice that bob's task id exists.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
  });

  it("answers 404 (after the acceptance wait) for a task that never appears or is another user's", async () => {
    dispatcher.addTask('t_sse_5', 'bob');
    const started = Date.now();
    const res = await fetch(`${base}/v1/tasks/t_sse_5/events`, { headers: auth(ALICE) });
    expect(res.status).toBe(404);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
  });

  it('ends open streams when the server closes', async () => {
    const other = createGatewayServer({ bus, apiKeys, logger });
    const { port } = await other.listen({ port: 0, host: '127.0.0.1' });
    dispatcher.addTask('t_sse_6', 'alice');
    const sse = await openSse(`http://127.0.0.1:${port}/v1/tasks/t_sse_6/events`, auth(ALICE));
    expect(sse.status).toBe(200);
    await other.close(2000);
    await expect(sse.ended).resolves.toEqual([]);
  });
});

describe('when the dispatcher is not running', () => {
  it('answers 503 with the structured no_responders error', async () => {
    const lonely = await Bus.connect({ servers: natsUrl, name: 'lonely', logger, prefix: 'nobody' });
    const other = createGatewayServer({ bus: lonely, apiKeys, logger });
    const { port } = await other.listen({ port: 0, host: '127.0.0.1' });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/tasks/t_any`, { headers: auth(ALICE) });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 'no_responders', retryable: true });

      const submit = await fetch(`http://127.0.0.1:${port}/v1/tasks`, { method: 'POST', headers: auth(ALICE), body: '{"goal":"g"}' });
      expect(submit.status).toBe(503);
      expect(((await submit.json()) as { retryable: boolean }).retryable).toBe(true);
    } finally {
      await other.close();
      await lonely.drain();
    }
  });
});

describe('teams', () => {
  it("submits for the key's team on that team's subject: the same user id and Idempotency-Key in two teams are two tasks", async () => {
    const headers = (key: string) => ({ ...auth(key), 'idempotency-key': 'team-order-1' });
    const ofDefault = await post({ goal: 'g' }, headers(ALICE));
    const ofB = await post({ goal: 'g' }, headers(ALICE_OF_B));
    expect(ofDefault.res.status).toBe(202);
    expect(ofB.res.status).toBe(202);
    expect(ofB.json.task_id).toBe(taskIdFor('team-b', '/hermes/gateway/alice', 'team-order-1'));
    expect(ofB.json.task_id).not.toBe(ofDefault.json.task_id);
    const stored = await storedSubmissions(ofB.json.task_id);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.data).toEqual({ user_id: 'alice', goal: 'g' });
    expect(await storedSubmissions(ofDefault.json.task_id)).toHaveLength(1);
  });

  it('refuses a body naming a team: the key says which team', async () => {
    const { res, json } = await post({ goal: 'g', team: 'default' }, auth(ALICE_OF_B));
    expect(res.status).toBe(400);
    expect(json.issues?.map((i) => i.path)).toContain('/team');
  });

  it("answers 404 for another team's task to a user of the same id and to that team's admin", async () => {
    const taskId = 't_teams_alice';
    dispatcher.addTask(taskId, 'alice');
    expect((await fetch(`${base}/v1/tasks/${taskId}`, { headers: auth(ALICE) })).status).toBe(200);
    for (const key of [ALICE_OF_B, ADMIN_OF_B]) {
      const res = await fetch(`${base}/v1/tasks/${taskId}`, { headers: auth(key) });
      expect(res.status).toBe(404);
      expect(((await res.json()) as ApiBody).code).toBe('not_found');
    }
    dispatcher.addTask('t_teams_b', 'alice', { team: 'team-b' });
    expect((await fetch(`${base}/v1/tasks/t_teams_b`, { headers: auth(ADMIN_OF_B) })).status).toBe(200);
    expect((await fetch(`${base}/v1/tasks/t_teams_b`, { headers: auth(ALICE) })).status).toBe(404);
    expect((await fetch(`${base}/v1/tasks/t_teams_b`, { headers: auth(ADMIN) })).status).toBe(404);
  });
});
