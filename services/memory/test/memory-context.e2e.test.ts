import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { Bus, request, type RemoteError } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer, startRedisServer, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';
import { startMemoryService } from '../src/memory-service.js';
import { closeRedis, connectRedis } from '../src/redis-client.js';
import { remoteError, testLlmClient, testTuning } from './support.js';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('memory: locks, context within a budget, summaries, working memory', () => {
  let redis: Redis;
  let service: Bus;
  let client: Bus;
  let llm: ScriptedLlm;
  let memory: ReturnType<typeof startMemoryService>;
  let closeLlm: () => Promise<void>;

  const say = (user_id: string, session_id: string, role: 'user' | 'assistant', content: string) =>
    request(client, contracts.sessionAppend, { user_id, session_id, messages: [{ role, content }] });

  beforeAll(async () => {
    const [nats, redisServer] = await Promise.all([startNatsServer({ jetstream: true }), startRedisServer()]);
    llm = await startScriptedLlm();
    redis = await connectRedis({ url: redisServer.url, logger, commandTimeoutMs: 2000 });
    service = await Bus.connect({ servers: nats.url, name: 'memory-test', logger });
    client = await Bus.connect({ servers: nats.url, name: 'runtime-test', logger });
    // The summariser's LLM client exactly as main builds it: through the semaphore on the bus.
    const opened = await testLlmClient(service, llm.baseUrl);
    closeLlm = opened.close;
    memory = startMemoryService({
      bus: service,
      redis,
      llm: opened.llm,
      logger,
      tuning: testTuning({ keyPrefix: 'hermes-test:', lockLeaseMs: 1500, summaryTriggerTokens: 400, summaryDebounceMs: 20 }),
    });
  });

  afterAll(async () => {
    await memory?.stop();
    await closeLlm?.();
    await client?.drain();
    await service?.drain();
    if (redis) await closeRedis(redis);
    await llm?.close();
    await cleanupAll();
  });

  it('stores a real tokenizer count with each message', async () => {
    const { messages } = await say('u1', 's-count', 'user', 'hello world, this is a test');
    expect(messages[0]!.tokens).toBe(7 + 4);
  });

  describe('session lock', () => {
    it('gives a second holder session_busy until the first releases', async () => {
      const first = await request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-lock' });
      const busy = await remoteError(request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-lock' }));
      expect(busy.wire).toMatchObject({ code: 'session_busy', retryable: true });
      expect(await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-lock', token: 'not-the-token' })).toEqual({ released: false });
      expect((await remoteError(request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-lock' }))).code).toBe('session_busy');
      expect(await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-lock', token: first.token })).toEqual({ released: true });
      const second = await request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-lock' });
      expect(second.token).not.toBe(first.token);
      await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-lock', token: second.token });
    });

    it('keeps a renewed lock past its lease and frees one whose holder stopped renewing', async () => {
      const held = await request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-lease', lease_ms: 1000 });
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 500));
        await request(client, contracts.sessionRenew, { user_id: 'u1', session_id: 's-lease', token: held.token, lease_ms: 1000 });
      }
      expect((await remoteError(request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-lease' }))).code).toBe('session_busy');
      // The holder "dies": no more renewals. A waiter gets the lock once the lease lapses.
      const started = Date.now();
      const next = await request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-lease', wait_ms: 3000 }, { timeoutMs: 5000 });
      expect(Date.now() - started).toBeLessThan(2000);
      const lost = await remoteError(request(client, contracts.sessionRenew, { user_id: 'u1', session_id: 's-lease', token: held.token }));
      expect(lost.wire).toMatchObject({ code: 'session_lock_lost', retryable: false });
      await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-lease', token: next.token });
    });

    it('lets holders of one group share the lock, and frees it only when the last releases', async () => {
      const lock = (group?: string) => request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-group', ...(group ? { group } : {}) });
      const a = await lock('task-1');
      const b = await lock('task-1');
      expect(a.token).not.toBe(b.token);
      expect((await remoteError(lock('task-2'))).code).toBe('session_busy');
      expect((await remoteError(lock())).code).toBe('session_busy');
      expect(await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-group', token: a.token })).toEqual({ released: true });
      // b still holds it: renewable, and other groups still wait.
      await request(client, contracts.sessionRenew, { user_id: 'u1', session_id: 's-group', token: b.token });
      expect((await remoteError(request(client, contracts.sessionRenew, { user_id: 'u1', session_id: 's-group', token: a.token }))).code).toBe(
        'session_lock_lost',
      );
      expect((await remoteError(lock('task-2'))).code).toBe('session_busy');
      expect(await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-group', token: b.token })).toEqual({ released: true });
      const c = await lock('task-2');
      await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-group', token: c.token });
    });

    it("frees a group's lock when a member died and the others released", async () => {
      const lock = (group: string, lease_ms?: number) =>
        request(client, contracts.sessionLock, { user_id: 'u1', session_id: 's-group-dead', group, ...(lease_ms ? { lease_ms } : {}) });
      await lock('task-1', 1000); // never renewed nor released: its holder "died"
      const alive = await lock('task-1', 3000);
      await new Promise((r) => setTimeout(r, 1200));
      expect((await remoteError(lock('task-2'))).code).toBe('session_busy');
      await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-group-dead', token: alive.token });
      const next = await lock('task-2');
      await request(client, contracts.sessionUnlock, { user_id: 'u1', session_id: 's-group-dead', token: next.token });
    });
  });

  it('assembles context within the budget: summary, pinned facts, latest messages; truncated tool result retrievable', async () => {
    const session = 's-ctx';
    await say('u2', session, 'user', 'Hi. Whatever you do, never email the customer directly.');
    await request(client, contracts.sessionPin, { user_id: 'u2', session_id: session, kind: 'constraint', text: 'Never email the customer directly.' });
    await request(client, contracts.sessionPin, { user_id: 'u2', session_id: session, kind: 'deadline', text: 'The report is due Friday 17:00.' });
    const big = Array.from({ length: 2000 }, (_, i) => `row ${i}: ok`).join('\n');
    const appended = await request(client, contracts.sessionAppend, {
      user_id: 'u2',
      session_id: session,
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ tool_call_id: 'c1', name: 'fetch_logs', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'c1', content: big },
      ],
    });
    // Checked before more turns arrive: the latest 4 messages are never summarised away.
    const wide = await request(client, contracts.sessionContext, { user_id: 'u2', session_id: session, model: 'gpt-4', context_limit: 100_000 });
    expect(wide.truncated_tool_results).toBe(1);
    const tool = wide.messages.find((m) => m.role === 'tool')!;
    expect(tool.truncated).toBe(true);
    expect(tool.tokens).toBeLessThan(300);
    const full = await request(client, contracts.sessionMessage, { user_id: 'u2', session_id: session, message_id: tool.message_id! });
    expect(full.message.content).toBe(big);
    expect(full.message.message_id).toBe(appended.messages[1]!.message_id);
    for (let i = 0; i < 30; i++) await say('u2', session, i % 2 ? 'assistant' : 'user', `message ${i}: ${'lorem ipsum '.repeat(15)}`);

    const ctx = await request(client, contracts.sessionContext, {
      user_id: 'u2',
      session_id: session,
      model: 'gpt-4o',
      context_limit: 1500,
      reserve_output: 300,
      reserve_tools: 200,
    });
    expect(ctx.budget).toBe(1000);
    expect(ctx.tokens).toBeLessThanOrEqual(1000);
    const pinned = ctx.messages.find((m) => m.kind === 'pinned');
    expect(pinned?.content).toContain('Never email the customer directly.');
    expect(pinned?.content).toContain('Friday 17:00');
    expect(ctx.messages.at(-1)?.content).toMatch(/^message 29:/);

    await memory.queue.idle();
  });

  it('summarises off the request path, incrementally, and pins the constraints the model lists', async () => {
    const session = 's-sum';
    await memory.queue.idle();
    llm.resetStats();
    llm.enqueue({
      content: JSON.stringify({
        summary: 'SUMMARY-ONE: user plans a migration on 2025-03-01.',
        pinned: [{ kind: 'deadline', text: 'Migration must finish by 2025-03-01.' }],
      }),
    });
    // Each part is one append: appended one by one, a loaded machine can start the job (20 ms after
    // the threshold is crossed) before the last messages are in, and those then stay verbatim.
    const part = (name: string) =>
      request(client, contracts.sessionAppend, {
        user_id: 'u3',
        session_id: session,
        messages: Array.from({ length: 12 }, (_, i) => ({
          role: i % 2 ? ('assistant' as const) : ('user' as const),
          content: `${name} part ${i}: ${'detail '.repeat(30)}`,
        })),
      });
    const started = Date.now();
    await part('first');
    // Appends answered without waiting for the model: the job runs in the background.
    expect(Date.now() - started).toBeLessThan(2000);
    await expect.poll(() => llm.requests.length, { timeout: 5000 }).toBe(1);
    await memory.queue.idle();
    const firstPrompt = JSON.stringify(llm.requests[0]!.body.messages);
    expect(firstPrompt).toContain('first part 0:');
    expect(firstPrompt).not.toContain('first part 11:'); // the latest 4 stay verbatim

    llm.enqueue({ content: JSON.stringify({ summary: 'SUMMARY-TWO', pinned: [] }) });
    await part('second');
    await expect.poll(() => llm.requests.length, { timeout: 5000 }).toBe(2);
    await memory.queue.idle();
    const secondPrompt = JSON.stringify(llm.requests[1]!.body.messages);
    expect(secondPrompt).toContain('SUMMARY-ONE');
    expect(secondPrompt).not.toContain('first part 0:');
    expect(secondPrompt).toContain('second part 0:');
    expect(llm.requests[1]!.body.model).toBe('gpt-4o-mini');

    const ctx = await request(client, contracts.sessionContext, { user_id: 'u3', session_id: session, model: 'gpt-4o', context_limit: 100_000 });
    expect(ctx.summary_used).toBe(true);
    expect(ctx.messages[0]).toMatchObject({ kind: 'summary' });
    expect(ctx.messages[0]!.content).toContain('SUMMARY-TWO');
    expect(ctx.messages[1]!.content).toContain('Migration must finish by 2025-03-01.');
    expect(ctx.messages.filter((m) => m.kind === 'message')).toHaveLength(4);
  });

  it('forces a summary on request (hermes session summarize)', async () => {
    llm.enqueue({ content: 'plain text summary, not JSON' });
    await say('u4', 's-force', 'user', 'short');
    const reply = await request(client, contracts.sessionSummarize, { user_id: 'u4', session_id: 's-force', keep_recent: 0 }, { timeoutMs: 10_000 });
    expect(reply).toEqual({ summary: 'plain text summary, not JSON', covered_messages: 1, folded_messages: 1, pins_added: 0 });
  });

  it('keeps working memory per task and clears it', async () => {
    await request(client, contracts.workingSet, { user_id: 'u5', task_id: 't1', entries: [{ subtask_id: 'a', key: 'host', value: { name: 'db1' } }] });
    await request(client, contracts.workingSet, { user_id: 'u5', task_id: 't1', entries: [{ subtask_id: 'b', key: 'count', value: 3 }] });
    const all = await request(client, contracts.workingGet, { user_id: 'u5', task_id: 't1' });
    expect(all.entries.map((e) => [e.subtask_id, e.key, e.value])).toEqual([
      ['a', 'host', { name: 'db1' }],
      ['b', 'count', 3],
    ]);
    expect((await request(client, contracts.workingGet, { user_id: 'u5', task_id: 't1', subtask_id: 'b' })).entries).toHaveLength(1);
    expect((await remoteError(request(client, contracts.workingGet, { user_id: 'mallory', task_id: 't1' }))).code).toBe('forbidden');
    expect((await remoteError(request(client, contracts.workingClear, { user_id: 'mallory', task_id: 't1' }))).code).toBe('forbidden');
    expect(await request(client, contracts.workingClear, { user_id: 'u5', task_id: 't1' })).toEqual({ cleared: 2 });
    expect((await request(client, contracts.workingGet, { user_id: 'u5', task_id: 't1' })).entries).toEqual([]);
  });

  it("another user naming alice's session id reaches a session of their own on every subject: nothing of alice's is seen, changed or blocked, and nothing tells the id is taken", async () => {
    const { messages } = await say('alice', 's-private', 'user', 'secret');
    // What mallory gets for alice's id, next to what he gets for an id nobody ever used.
    const outcome = (p: Promise<unknown>) =>
      p.then(
        (value) => ({ value }),
        (err: unknown) => ({ error: (err as RemoteError).code }),
      );
    const probe = (session_id: string) => {
      const id = { user_id: 'mallory', session_id };
      return [
        () => outcome(request(client, contracts.sessionContext, { ...id, model: 'gpt-4o', context_limit: 10_000 })),
        () => outcome(request(client, contracts.sessionMessage, { ...id, message_id: messages[0]!.message_id })),
        () => outcome(request(client, contracts.sessionRead, id)),
        () => outcome(request(client, contracts.sessionRenew, { ...id, token: 'x' })),
        () => outcome(request(client, contracts.sessionUnlock, { ...id, token: 'x' })),
        () => outcome(request(client, contracts.sessionDelete, id)),
      ];
    };
    const fresh = probe('s-never-used');
    for (const [i, attempt] of probe('s-private').entries()) expect([i, await attempt()]).toEqual([i, await fresh[i]!()]);

    // mallory's writes under that id land in his own session and block nothing of alice's.
    await request(client, contracts.sessionPin, { user_id: 'mallory', session_id: 's-private', kind: 'fact', text: 'injected' });
    await request(client, contracts.sessionSummarize, { user_id: 'mallory', session_id: 's-private' }, { timeoutMs: 10_000 });
    const squat = await request(client, contracts.sessionLock, { user_id: 'mallory', session_id: 's-private' });
    const aliceLock = await request(client, contracts.sessionLock, { user_id: 'alice', session_id: 's-private', wait_ms: 0 });
    await request(client, contracts.sessionUnlock, { user_id: 'alice', session_id: 's-private', token: aliceLock.token });
    await request(client, contracts.sessionUnlock, { user_id: 'mallory', session_id: 's-private', token: squat.token });
    const own = await request(client, contracts.sessionContext, { user_id: 'alice', session_id: 's-private', model: 'gpt-4o', context_limit: 10_000 });
    expect(own.messages.map((m) => m.content)).toEqual(['secret']);
    const theirs = await request(client, contracts.sessionContext, { user_id: 'mallory', session_id: 's-private', model: 'gpt-4o', context_limit: 10_000 });
    expect(theirs.messages.map((m) => m.content).join('\n')).toMatch(/injected/);
    expect(own.messages.map((m) => m.content).join('\n')).not.toMatch(/injected/);
    // Each lists the id as their own session.
    expect((await request(client, contracts.sessionList, { user_id: 'mallory' })).sessions.map((s) => s.session_id)).toContain('s-private');
    expect((await request(client, contracts.sessionList, { user_id: 'alice' })).sessions.find((s) => s.session_id === 's-private')).toMatchObject({
      message_count: 1,
      pinned: 0,
    });
  });

  describe('session list, read, delete', () => {
    const ids = (sessions: { session_id: string }[]) => sessions.map((s) => s.session_id);

    it("lists a user's sessions newest first with counts and times, and only that user's", async () => {
      // Apart by a few ms, so the order by write time is not a tie.
      const tick = () => new Promise((r) => setTimeout(r, 5));
      const a = await say('lister', 'ls-a', 'user', 'first session');
      await tick();
      await say('lister', 'ls-b', 'user', 'second session');
      await tick();
      await request(client, contracts.sessionPin, { user_id: 'lister', session_id: 'ls-c', kind: 'constraint', text: 'only a pin' });
      await tick();
      await say('lister', 'ls-a', 'assistant', 'answered later, so ls-a moves to the top');
      await say('other-lister', 'ls-other', 'user', 'not yours');
      const { sessions, next_cursor } = await request(client, contracts.sessionList, { user_id: 'lister' });
      expect(ids(sessions)).toEqual(['ls-a', 'ls-c', 'ls-b']);
      expect(next_cursor).toBeNull();
      const [rowA] = sessions;
      expect(rowA).toMatchObject({ message_count: 2, pinned: 0, locked: false, created_at: a.messages[0]!.created_at });
      expect(rowA!.tokens).toBeGreaterThan(10);
      expect(Date.parse(rowA!.updated_at)).toBeGreaterThanOrEqual(Date.parse(rowA!.created_at));
      expect(sessions[1]).toMatchObject({ message_count: 0, tokens: 0, pinned: 1 });

      const page1 = await request(client, contracts.sessionList, { user_id: 'lister', limit: 2 });
      expect(ids(page1.sessions)).toEqual(['ls-a', 'ls-c']);
      const page2 = await request(client, contracts.sessionList, { user_id: 'lister', limit: 2, cursor: page1.next_cursor! });
      expect(ids(page2.sessions)).toEqual(['ls-b']);
      expect(page2.next_cursor).toBeNull();
    });

    it('the same session id written by two users is two sessions, each listed by its own owner only', async () => {
      await say('owner-x', 'ls-taken', 'user', 'mine');
      await say('intruder', 'ls-taken', 'user', 'trying to write into it');
      const [intruders] = (await request(client, contracts.sessionList, { user_id: 'intruder' })).sessions;
      const [owners] = (await request(client, contracts.sessionList, { user_id: 'owner-x' })).sessions;
      expect(intruders).toMatchObject({ session_id: 'ls-taken', message_count: 1 });
      expect(owners).toMatchObject({ session_id: 'ls-taken', message_count: 1 });
      expect((await request(client, contracts.sessionRead, { user_id: 'owner-x', session_id: 'ls-taken' })).messages.map((m) => m.content)).toEqual(['mine']);
    });

    it('deletes a session with every key it has; refuses another user and a locked session', async () => {
      await say('deleter', 'ls-del', 'user', 'to be deleted');
      await request(client, contracts.sessionAppend, {
        user_id: 'deleter',
        session_id: 'ls-del',
        messages: [{ role: 'tool', content: 'x'.repeat(5000), tool_call_id: 'c1' }],
      });
      await request(client, contracts.sessionPin, { user_id: 'deleter', session_id: 'ls-del', kind: 'constraint', text: 'never on Sundays' });
      await request(client, contracts.sessionSummarize, { user_id: 'deleter', session_id: 'ls-del', keep_recent: 0 }, { timeoutMs: 10_000 });
      expect(await redis.keys('hermes-test:session:{deleter/ls-del}:*')).toEqual(
        expect.arrayContaining(['hermes-test:session:{deleter/ls-del}:summary', 'hermes-test:session:{deleter/ls-del}:pins']),
      );

      // Another user's delete of that id reaches their own (absent) session: nothing deleted.
      expect(await request(client, contracts.sessionDelete, { user_id: 'mallory', session_id: 'ls-del' })).toEqual({ deleted: false, messages: 0 });
      const lock = await request(client, contracts.sessionLock, { user_id: 'deleter', session_id: 'ls-del' });
      expect((await remoteError(request(client, contracts.sessionDelete, { user_id: 'deleter', session_id: 'ls-del' }))).code).toBe('session_busy');
      await request(client, contracts.sessionUnlock, { user_id: 'deleter', session_id: 'ls-del', token: lock.token });
      // The appends above also queued a background summary, behind other tests' sessions: a delete
      // during that run is refused (busy), as it should be, so let the queue finish first.
      await memory.queue.idle();

      expect(await request(client, contracts.sessionDelete, { user_id: 'deleter', session_id: 'ls-del' })).toEqual({ deleted: true, messages: 2 });
      expect(await redis.keys('hermes-test:session:{deleter/ls-del}:*')).toEqual([]);
      expect(ids((await request(client, contracts.sessionList, { user_id: 'deleter' })).sessions)).toEqual([]);
      expect((await request(client, contracts.sessionRead, { user_id: 'deleter', session_id: 'ls-del' })).messages).toEqual([]);
      expect(await request(client, contracts.sessionDelete, { user_id: 'deleter', session_id: 'ls-del' })).toEqual({ deleted: false, messages: 0 });
      // Deleted means free: another user may now start a session of that name.
      await say('mallory', 'ls-del', 'user', 'a new session');
    });
  });
});
