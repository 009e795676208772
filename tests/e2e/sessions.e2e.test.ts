import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { ModelScript } from './model-script.js';
import { ADMIN_KEY, API_KEY, replicasOf, startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

/**
 * Sessions through every service as real processes: listed, read and deleted over HTTP and the
 * CLI, and one agent loop per session: two runtime replicas could run two tasks of
 * one session at once; the session lock (memory service) makes the second wait or fail.
 */
async function twoTasksOnOneSession(stack: Stack, script: ModelScript, name: string) {
  const session_id = `shared-${name}`;
  const first = `first task on ${session_id}`;
  const second = `second task on ${session_id}`;
  // The first loop's model call takes 1.5 s: long enough for the second task to arrive meanwhile.
  script.on(first, [{ content: `answer to ${first}`, delayMs: 1500 }]);
  script.on(second, [{ content: `answer to ${second}` }]);
  const firstId = await submit(stack.bus, { user_id: 'alice', session_id, goal: first });
  const firstWatch = watchTask(stack.bus, firstId);
  // The first loop is running (it asked the model) before the second task is submitted.
  await eventually(() => script.requests(first).length === 1, 15_000, 'the first task to reach the model');
  const secondId = await submit(stack.bus, { user_id: 'alice', session_id, goal: second });
  const [firstEvents, secondEvents] = await Promise.all([firstWatch.done, watchTask(stack.bus, secondId).done]);
  const stored = await request(stack.bus, contracts.sessionRead, { user_id: 'alice', session_id });
  return { first, second, firstEvents, secondEvents, stored: stored.messages.map((m) => [m.role, m.content]) };
}

// RUNTIME_SESSION_WAIT_MS of the `wait` stack: far above the first test's wait, far below the bound test's.
const WAIT_BOUND_MS = 6000;

describe('RUNTIME_SESSION_BUSY=wait (default)', () => {
  let stack: Stack;
  let script: ModelScript;
  beforeAll(async () => {
    // A short wait bound and lease, so the bound and a lost lock show within seconds.
    stack = await startStack({
      runtimeReplicas: 2,
      serviceEnv: { runtime: { RUNTIME_SESSION_WAIT_MS: String(WAIT_BOUND_MS) }, memory: { MEMORY_LOCK_LEASE_MS: '3000' } },
    });
    script = new ModelScript(stack.llm);
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('queues a second task on a busy session behind the first: their turns never interleave', async () => {
    const run = await twoTasksOnOneSession(stack, script, 'wait');
    expect(outcomeOf(run.firstEvents)).toMatchObject({ kind: 'completed', output: `answer to ${run.first}` });
    expect(outcomeOf(run.secondEvents)).toMatchObject({ kind: 'completed', output: `answer to ${run.second}` });
    expect(run.stored).toEqual([
      ['user', run.first],
      ['assistant', `answer to ${run.first}`],
      ['user', run.second],
      ['assistant', `answer to ${run.second}`],
    ]);
    // The second loop started only after the first wrote its turn: its context has the first turn.
    const [secondAsk] = script.requests(run.second);
    expect(JSON.stringify(secondAsk!.body.messages)).toContain(`answer to ${run.first}`);
  });

  it('fails a task that waited longer than RUNTIME_SESSION_WAIT_MS with session_busy', async () => {
    const session_id = 'shared-bound';
    const first = 'a long first task on shared-bound';
    const second = 'a second task on shared-bound that waits too long';
    script.on(first, [{ content: 'long answer', delayMs: WAIT_BOUND_MS * 2 }]);
    script.on(second, [{ content: 'never asked' }]);
    const firstId = await submit(stack.bus, { user_id: 'alice', session_id, goal: first });
    const firstDone = watchTask(stack.bus, firstId, 60_000).done;
    await eventually(() => script.requests(first).length === 1, 15_000, 'the first task to reach the model');
    const secondId = await submit(stack.bus, { user_id: 'alice', session_id, goal: second });
    const secondEvents = await watchTask(stack.bus, secondId, 60_000).done;
    expect(outcomeOf(secondEvents)).toMatchObject({ kind: 'failed', error: 'session_busy' });
    expect(script.requests(second)).toHaveLength(0);
    expect(outcomeOf(await firstDone)).toMatchObject({ kind: 'completed', output: 'long answer' });
  });

  it('stops a loop whose session lock was taken over, failing it with session_lock_lost before it writes', async () => {
    const session_id = 'shared-lost';
    const goal = 'a task whose lock is taken over';
    script.on(goal, [{ content: 'too late', delayMs: 8000 }]);
    const taskId = await submit(stack.bus, { user_id: 'alice', session_id, goal });
    const done = watchTask(stack.bus, taskId, 60_000).done;
    await eventually(() => script.requests(goal).length === 1, 15_000, 'the task to reach the model');
    // As if the lease had lapsed and another task's loop had taken the session since.
    // The session is alice's own: stored as <user>/<session> (see services/memory/src/owner-scope.ts).
    await promisify(execFile)('redis-cli', ['-u', stack.redisUrl, 'SET', `hermes:session:{alice/${session_id}}:lock`, 'another-task', 'PX', '10000']);
    expect(outcomeOf(await done)).toMatchObject({ kind: 'failed', error: 'session_lock_lost' });
    expect((await request(stack.bus, contracts.sessionRead, { user_id: 'alice', session_id })).messages).toEqual([]);
  });

  const say = (user_id: string, session_id: string, content: string) =>
    request(stack.bus, contracts.sessionAppend, {
      user_id,
      session_id,
      messages: [
        { role: 'user', content },
        { role: 'assistant', content: `re: ${content}` },
      ],
    });
  const http = async (method: string, path: string, key = API_KEY) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & { code?: string } };
  };
  const sessionIds = (body: Record<string, unknown>) => (body.sessions as { session_id: string }[]).map((s) => s.session_id);

  it("lists, reads and deletes a user's sessions over HTTP; another user's session id is the caller's own (empty) session", async () => {
    await say('alice', 'http-a', 'hello over http');
    await say('bob', 'http-bob', 'bob only');

    const listed = await http('GET', '/v1/users/alice/sessions');
    expect(listed.status).toBe(200);
    expect(sessionIds(listed.body)).toContain('http-a');
    expect(sessionIds(listed.body)).not.toContain('http-bob');
    expect((listed.body.sessions as { session_id: string; message_count: number }[]).find((s) => s.session_id === 'http-a')).toMatchObject({
      message_count: 2,
    });
    // A key acts for its own user only; an admin for anyone.
    expect(await http('GET', '/v1/users/bob/sessions')).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(sessionIds((await http('GET', '/v1/users/bob/sessions', ADMIN_KEY)).body)).toEqual(['http-bob']);
    expect(await http('GET', '/v1/users/alice/sessions?limit=0')).toMatchObject({ status: 400, body: { code: 'invalid_query' } });
    expect(await http('GET', '/v1/users/alice/sessions/http-a?limit=5000')).toMatchObject({ status: 400, body: { code: 'invalid_query' } });
    expect(await http('DELETE', '/v1/users/alice/sessions/bad%20id')).toMatchObject({ status: 400, body: { code: 'invalid_session_id' } });

    const read = await http('GET', '/v1/users/alice/sessions/http-a');
    expect(read.status).toBe(200);
    expect((read.body.messages as { content: string }[]).map((m) => m.content)).toEqual(['hello over http', 're: hello over http']);
    // bob's id in alice's path is alice's own session of that id: answered exactly as an id nobody used.
    expect(await http('GET', '/v1/users/alice/sessions/http-bob')).toEqual({ status: 200, body: { session_id: 'http-bob', messages: [] } });
    expect(await http('GET', '/v1/users/alice/sessions/http-nobody')).toEqual({ status: 200, body: { session_id: 'http-nobody', messages: [] } });
    expect(JSON.stringify(await http('DELETE', '/v1/users/alice/sessions/http-bob')).replaceAll('http-bob', '<id>')).toBe(
      JSON.stringify(await http('DELETE', '/v1/users/alice/sessions/http-nobody')).replaceAll('http-nobody', '<id>'),
    );
    expect((await request(stack.bus, contracts.sessionRead, { user_id: 'bob', session_id: 'http-bob' })).messages).toHaveLength(2);

    expect(await http('DELETE', '/v1/users/alice/sessions/http-a')).toMatchObject({ status: 200, body: { deleted: true, messages: 2 } });
    expect(await http('DELETE', '/v1/users/alice/sessions/http-a')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(sessionIds((await http('GET', '/v1/users/alice/sessions')).body)).not.toContain('http-a');
  });

  it('hermes session list, show and delete', async () => {
    await say('carol', 'cli-s1', 'hello from the cli test');
    await say('dave', 'cli-dave', 'dave only');
    // The built `hermes` bin, as a person runs it.
    const cli = fileURLToPath(new URL('../../tools/cli/dist/main.js', import.meta.url));
    const hermes = (...argv: string[]) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) => {
        execFile(process.execPath, [cli, ...argv], { env: { ...process.env, NATS_URL: stack.natsUrl } }, (error, out, err) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
        );
      });
    const list = await hermes('session', 'list', 'carol');
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^SESSION\s+MESSAGES\s+TOKENS/);
    expect(list.out).toMatch(/\ncli-s1\s+2\s+\d+/);
    const show = await hermes('session', 'show', 'carol', 'cli-s1');
    expect(show.out).toMatch(/user\s+hello from the cli test\n.*assistant\s+re: hello from the cli test/);
    // dave's id is carol's own, absent, session: not found, as any unused id.
    const refused = await hermes('session', 'delete', 'carol', 'cli-dave');
    expect(refused.code).toBe(1);
    expect(refused.err).toBe((await hermes('session', 'delete', 'carol', 'cli-nobody')).err.replace('cli-nobody', 'cli-dave'));
    expect((await request(stack.bus, contracts.sessionRead, { user_id: 'dave', session_id: 'cli-dave' })).messages).toHaveLength(2);
    const deleted = await hermes('session', 'delete', 'carol', 'cli-s1');
    expect(deleted).toMatchObject({ code: 0, out: 'deleted session cli-s1 (2 messages)\n' });
    expect((await hermes('session', 'list', 'carol')).out).not.toContain('cli-s1');
    expect((await hermes('session', 'delete', 'carol', 'cli-s1')).code).toBe(1);
  });

  // Last in this block: the restart wipes every session the tests before it wrote.
  it('a loop whose session lock vanished with a Redis restart (no persistence) takes it again and completes', async () => {
    const session_id = 'shared-redis-restart';
    const goal = 'a task that outlives a Redis restart';
    script.on(goal, [{ content: 'survived the restart', delayMs: 6000 }]);
    const taskId = await submit(stack.bus, { user_id: 'alice', session_id, goal });
    const done = watchTask(stack.bus, taskId, 90_000).done;
    await eventually(() => script.requests(goal).length === 1, 15_000, 'the task to reach the model');
    // kill -9 and back on the same port with nothing: the lock (and the session) are gone.
    await stack.redis!.kill();
    await new Promise((r) => setTimeout(r, 1000));
    await stack.redis!.restart();

    expect(outcomeOf(await done)).toMatchObject({ kind: 'completed', output: 'survived the restart' });
    const stored = await request(stack.bus, contracts.sessionRead, { user_id: 'alice', session_id });
    expect(stored.messages.map((m) => m.content)).toEqual([goal, 'survived the restart']);
    // It got there by taking the vanished lock again, not by never noticing it was gone.
    const runtimes = await replicasOf(stack, 'runtime');
    await expect(Promise.any(runtimes.map((r) => r.waitForLog(/session lock had vanished/, 2000)))).resolves.toBeDefined();
  });
});

describe('RUNTIME_SESSION_BUSY=fail', () => {
  let stack: Stack;
  let script: ModelScript;
  beforeAll(async () => {
    stack = await startStack({ runtimeReplicas: 2, serviceEnv: { runtime: { RUNTIME_SESSION_BUSY: 'fail' } } });
    script = new ModelScript(stack.llm);
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('fails a second task on a busy session with session_busy and leaves the session to the first', async () => {
    const run = await twoTasksOnOneSession(stack, script, 'fail');
    expect(outcomeOf(run.firstEvents)).toMatchObject({ kind: 'completed', output: `answer to ${run.first}` });
    expect(outcomeOf(run.secondEvents)).toMatchObject({ kind: 'failed', error: 'session_busy' });
    expect(script.requests(run.second)).toHaveLength(0);
    expect(run.stored).toEqual([
      ['user', run.first],
      ['assistant', `answer to ${run.first}`],
    ]);
    // The lock was released: a third task on the session runs.
    script.on('third task on shared-fail', [{ content: 'third answer' }]);
    const thirdId = await submit(stack.bus, { user_id: 'alice', session_id: 'shared-fail', goal: 'third task on shared-fail' });
    expect(outcomeOf(await watchTask(stack.bus, thirdId).done)).toMatchObject({ kind: 'completed', output: 'third answer' });
  });
});
