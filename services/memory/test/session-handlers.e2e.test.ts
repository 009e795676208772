import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { Bus, RemoteError, decodeJson, encodeJson, request } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer, startRedisServer, type RedisServerHandle } from '@hermes/testkit';
import { closeRedis, connectRedis } from '../src/redis-client.js';
import { SessionNames } from '../src/owner-scope.js';
import { serveSessionHandlers } from '../src/session-handlers.js';
import { SessionStore } from '../src/session-store.js';
import { natsHandles } from '@hermes/bus/internal';

const COMMAND_TIMEOUT_MS = 1000;
const logger = createLogger({ service: 'test', level: 'silent' });

describe('memory session handlers over NATS', () => {
  let redisServer: RedisServerHandle;
  let redis: Redis;
  let service: Bus;
  let client: Bus;
  let store: SessionStore;

  const append = (user_id: string, session_id: string, content: string) =>
    request(client, contracts.sessionAppend, { user_id, session_id, messages: [{ role: 'user', content }] });
  const remoteError = async (promise: Promise<unknown>): Promise<RemoteError> => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RemoteError);
    return err as RemoteError;
  };

  beforeAll(async () => {
    const [nats, redisHandle] = await Promise.all([startNatsServer(), startRedisServer()]);
    redisServer = redisHandle;
    redis = await connectRedis({ url: redisServer.url, logger, commandTimeoutMs: COMMAND_TIMEOUT_MS });
    service = await Bus.connect({ servers: nats.url, name: 'memory-test', logger });
    client = await Bus.connect({ servers: nats.url, name: 'runtime-test', logger });
    store = new SessionStore({ redis, keyPrefix: 'hermes-test:' });
    serveSessionHandlers({ bus: service, store, names: new SessionNames({ redis, keyPrefix: 'hermes-test:' }) });
  });

  afterAll(async () => {
    await client?.drain();
    await service?.drain();
    if (redis) await closeRedis(redis);
    await cleanupAll();
  });

  it('appends and reads a session through the contracts', async () => {
    const appended = await request(client, contracts.sessionAppend, {
      user_id: 'u1',
      session_id: 's1',
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: null, tool_calls: [{ tool_call_id: 'c1', name: 'echo', arguments: '{"text":"hi"}' }] },
      ],
    });
    expect(appended.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const read = await request(client, contracts.sessionRead, { user_id: 'u1', session_id: 's1', limit: 1 });
    expect(read.messages).toEqual([appended.messages[1]]);
  });

  it('answers a request without session_id with invalid_payload, then keeps serving', async () => {
    const msg = await natsHandles(client).nc.request(client.subjects.sessionAppend, encodeJson({ user_id: 'u1', messages: [{ role: 'user', content: 'x' }] }), {
      timeout: 5000,
    });
    const decoded = decodeJson(msg.data);
    expect(decoded).toMatchObject({
      ok: true,
      value: {
        ok: false,
        error: { code: 'invalid_payload', retryable: false, details: { issues: expect.arrayContaining([expect.objectContaining({ path: '/session_id' })]) } },
      },
    });
    expect((await append('u1', 's-after-invalid', 'still here')).messages).toHaveLength(1);
  });

  it('refuses an append over the memory-write limits with payload_limit naming limit and path, stores nothing, and keeps serving', async () => {
    const polluted = '{"user_id":"u1","session_id":"s-limits","messages":[{"role":"user","content":"x","__proto__":{"admin":true}}]}';
    const deep = `{"user_id":"u1","session_id":"s-limits","messages":[{"role":"user","content":"x","x":${'['.repeat(5000)}${']'.repeat(5000)}}]}`;
    for (const [body, limit, path] of [
      [polluted, 'forbiddenKey', '/messages/0/__proto__'],
      [deep, 'maxDepth', `/messages/0/x${'/0'.repeat(33)}`],
    ] as const) {
      const msg = await natsHandles(client).nc.request(client.subjects.sessionAppend, new TextEncoder().encode(body), { timeout: 5000 });
      expect(decodeJson(msg.data)).toMatchObject({
        ok: true,
        value: { ok: false, error: { code: 'payload_limit', retryable: false, details: { limit, path } } },
      });
    }
    expect((await request(client, contracts.sessionRead, { user_id: 'u1', session_id: 's-limits' })).messages).toEqual([]);
    expect((await append('u1', 's-limits', 'within limits')).messages).toHaveLength(1);
  });

  const contents = async (user_id: string, session_id: string) =>
    (await request(client, contracts.sessionRead, { user_id, session_id })).messages.map((m) => m.content);

  it("another user naming the same session id gets a session of their own: empty, never alice's, and not refused", async () => {
    await append('alice', 's-alice', 'mine');
    // Exactly the answer of an id nobody used: nothing tells mallory that alice has an s-alice.
    expect(await request(client, contracts.sessionRead, { user_id: 'mallory', session_id: 's-alice' })).toEqual(
      await request(client, contracts.sessionRead, { user_id: 'mallory', session_id: 's-nobody' }),
    );
    const theirs = await append('mallory', 's-alice', 'injected');
    expect(theirs.messages[0]).toMatchObject({ user_id: 'mallory', session_id: 's-alice' });
    expect(await contents('alice', 's-alice')).toEqual(['mine']);
    expect(await contents('mallory', 's-alice')).toEqual(['injected']);
  });

  it("a session written before sessions were the owner's (a bare id) is read through for its owner only", async () => {
    // As the release before stored it: under the bare id, claimed by alice.
    await store.append('alice', 's-legacy', [{ role: 'user', content: 'written before the upgrade' }]);
    expect(await contents('alice', 's-legacy')).toEqual(['written before the upgrade']);
    expect((await append('alice', 's-legacy', 'written after')).messages[0]).toMatchObject({ session_id: 's-legacy' });
    expect((await store.read('alice', 's-legacy')).map((m) => m.content)).toEqual(['written before the upgrade', 'written after']);
    // Another user gets their own, empty, session of that id.
    expect(await contents('mallory', 's-legacy')).toEqual([]);
    await append('mallory', 's-legacy', 'mallory here');
    expect(await contents('alice', 's-legacy')).toEqual(['written before the upgrade', 'written after']);
    expect(await contents('mallory', 's-legacy')).toEqual(['mallory here']);
  });

  it('answers with a retryable error while Redis stops responding, and recovers', async () => {
    // SIGSTOP keeps the connection open but silent: only the command timeout can end the wait.
    process.kill(redisServer.pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const err = await remoteError(append('u1', 's-frozen', 'anyone there?'));
      expect(err.wire).toMatchObject({ code: 'unavailable', retryable: true });
      expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + 1500);
    } finally {
      process.kill(redisServer.pid, 'SIGCONT');
    }
    await expect
      .poll(
        () =>
          append('u1', 's-thawed', 'back').then(
            () => true,
            () => false,
          ),
        { timeout: 10_000, interval: 200 },
      )
      .toBe(true);
  });

  it('answers with a retryable error while Redis is down, and works again after it restarts', async () => {
    await redisServer.kill();
    const started = Date.now();
    const err = await remoteError(append('u1', 's-outage', 'anyone there?'));
    expect(err.wire).toMatchObject({ code: 'unavailable', retryable: true });
    expect(Date.now() - started).toBeLessThan(3000);
    // The service is still up: a second request during the outage is answered too, not dropped.
    expect((await remoteError(request(client, contracts.sessionRead, { user_id: 'u1', session_id: 's-outage' }))).retryable).toBe(true);

    await redisServer.restart();
    await expect
      .poll(
        () =>
          append('u1', 's-outage', 'back').then(
            () => true,
            () => false,
          ),
        { timeout: 10_000, interval: 200 },
      )
      .toBe(true);
    const read = await request(client, contracts.sessionRead, { user_id: 'u1', session_id: 's-outage' });
    expect(read.messages.map((m) => m.content)).toEqual(['back']);
  });
});
