import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewSessionMessage } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startRedisServer } from '@hermes/testkit';
import { closeRedis, connectRedis } from '../src/redis-client.js';
import { SessionStore } from '../src/session-store.js';
import { countText } from '@hermes/llm';

const text = (role: NewSessionMessage['role'], content: string): NewSessionMessage => ({ role, content });

describe('SessionStore against a real redis-server', () => {
  let redis: Redis;
  let store: SessionStore;

  beforeAll(async () => {
    const server = await startRedisServer();
    redis = await connectRedis({ url: server.url, logger: createLogger({ service: 'test', level: 'silent' }), commandTimeoutMs: 2000 });
    store = new SessionStore({ redis, keyPrefix: 'test:' });
  });

  afterAll(async () => {
    if (redis) await closeRedis(redis);
    await cleanupAll();
  });

  it('reads back appended messages as stored, tool calls included', async () => {
    const before = Date.now();
    const appended = await store.append('u1', 's-roundtrip', [
      text('system', 'You are helpful.'),
      text('user', 'What time is it?'),
      { role: 'assistant', content: null, tool_calls: [{ tool_call_id: 'call_1', name: 'time_now', arguments: '{"timezone":"UTC"}' }] },
      { role: 'tool', content: '2025-01-01T00:00:00Z', tool_call_id: 'call_1' },
    ]);
    expect(appended.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(appended.every((m) => m.session_id === 's-roundtrip' && m.user_id === 'u1')).toBe(true);
    const ids = appended.map((m) => m.message_id);
    expect(new Set(ids).size).toBe(4);
    expect([...ids].sort()).toEqual(ids);
    for (const m of appended) {
      expect(m.message_id).toMatch(/^m_/);
      expect(Date.parse(m.created_at)).toBeGreaterThanOrEqual(before - 1);
      expect(new Date(m.created_at).toISOString()).toBe(m.created_at);
    }
    // o200k counts plus 4 tokens of per-message overhead.
    expect(appended[1]?.tokens).toBe(countText('What time is it?', 'o200k_base') + 4);
    expect(appended[2]?.tokens).toBe(countText('time_now', 'o200k_base') + countText('{"timezone":"UTC"}', 'o200k_base') + 4);

    expect(await store.read('u1', 's-roundtrip')).toEqual(appended);
  });

  it('returns the latest messages oldest first, up to the limit', async () => {
    await store.append('u1', 's-limit', [text('user', 'one'), text('assistant', 'two')]);
    await store.append('u1', 's-limit', [text('user', 'three'), text('assistant', 'four'), text('user', 'five')]);
    expect((await store.read('u1', 's-limit', 3)).map((m) => m.content)).toEqual(['three', 'four', 'five']);
    expect((await store.read('u1', 's-limit', 100)).map((m) => m.content)).toEqual(['one', 'two', 'three', 'four', 'five']);
  });

  it('returns the latest 50 by default', async () => {
    const batch = Array.from({ length: 60 }, (_, i) => text('user', `m${i}`));
    await store.append('u1', 's-default-limit', batch);
    const read = await store.read('u1', 's-default-limit');
    expect(read).toHaveLength(50);
    expect(read[0]?.content).toBe('m10');
    expect(read[49]?.content).toBe('m59');
  });

  it('reads a session that does not exist as empty', async () => {
    expect(await store.read('u1', 's-never-written')).toEqual([]);
  });

  it("refuses another user's session for append and read, and leaves it untouched", async () => {
    await store.append('alice', 's-owned', [text('user', 'private')]);
    await expect(store.append('mallory', 's-owned', [text('user', 'injected')])).rejects.toMatchObject({ code: 'session_forbidden', sessionId: 's-owned' });
    await expect(store.read('mallory', 's-owned')).rejects.toMatchObject({ code: 'session_forbidden' });
    expect((await store.read('alice', 's-owned')).map((m) => m.content)).toEqual(['private']);
  });

  it("keeps different users' sessions apart", async () => {
    await store.append('alice', 's-alice', [text('user', 'from alice')]);
    await store.append('bob', 's-bob', [text('user', 'from bob')]);
    const alice = await store.read('alice', 's-alice');
    const bob = await store.read('bob', 's-bob');
    expect(alice.map((m) => [m.user_id, m.content])).toEqual([['alice', 'from alice']]);
    expect(bob.map((m) => [m.user_id, m.content])).toEqual([['bob', 'from bob']]);
    expect(await store.read('alice', 's-brand-new')).toEqual([]);
  });

  it('lets exactly one user claim a new session when two race for it', async () => {
    const attempts = Array.from({ length: 20 }, (_, i) => {
      const user = i % 2 === 0 ? 'racer-a' : 'racer-b';
      return store.append(user, 's-race', [text('user', `${user} ${i}`)]).then(() => user);
    });
    const results = await Promise.allSettled(attempts);
    const winners = new Set(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
    expect(winners.size).toBe(1);
    const [winner] = [...winners];
    const rejected = results.filter((r) => r.status === 'rejected');
    expect(rejected).toHaveLength(10);
    for (const r of rejected) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'session_forbidden' });
    const stored = await store.read(winner!, 's-race');
    expect(stored).toHaveLength(10);
    expect(stored.every((m) => m.user_id === winner && m.content?.startsWith(winner!))).toBe(true);
  });

  it('keeps deployments with different key prefixes apart', async () => {
    const other = new SessionStore({ redis, keyPrefix: 'other:' });
    await store.append('u1', 's-prefixed', [text('user', 'in test:')]);
    expect(await other.read('u1', 's-prefixed')).toEqual([]);
  });
});
