import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus } from '@hermes/bus';
import {
  OutgoingPayloadError,
  PayloadEncodingError,
  PayloadLimitError,
  RemoteError,
  ReplyError,
  consumeContract,
  decodeJson,
  isUnansweredRequest,
  encodeJson,
  request,
  serve,
} from '@hermes/bus';
import { contracts, wireError, type MemoryWriteJob, type WireError, type SessionMessage, type SessionReadRequest } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { connectBus, eventually, runtimeJob, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

let nats: NatsServerHandle;
const buses: Bus[] = [];

async function open(): Promise<Bus> {
  const bus = await connectBus(nats.url, { prefix: uniquePrefix('rr') });
  buses.push(bus);
  return bus;
}

const stored: SessionMessage = {
  message_id: 'm1',
  session_id: 's1',
  user_id: 'u1',
  role: 'user',
  content: 'hello',
  created_at: '2025-01-01T00:00:00.000Z',
  tokens: 2,
};

/** Sends raw bytes on a request subject and returns the decoded reply envelope. */
async function rawRequest(bus: Bus, subject: string, body: Uint8Array): Promise<unknown> {
  const msg = await natsHandles(bus).nc.request(subject, body, { timeout: 2_000 });
  const decoded = decodeJson(msg.data);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.value;
}

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('request and serve', () => {
  it('a valid request gets the handler result', async () => {
    const bus = await open();
    serve(bus, contracts.sessionRead, async (req) => ({ messages: [{ ...stored, user_id: req.user_id, session_id: req.session_id }] }));

    const reply = await request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-7', limit: 5 });

    expect(reply.messages).toEqual([{ ...stored, user_id: 'alice', session_id: 'chat-7' }]);
  });

  it('work handed to afterReply runs once the reply is sent, and its failure does not touch the reply', async () => {
    const bus = await open();
    const order: string[] = [];
    const sub = natsHandles(bus).nc.subscribe('after.reply');
    serve(bus, contracts.sessionRead, async (req, ctx) => {
      ctx.afterReply(() => {
        order.push('after');
        // A publish from here shares the reply's socket write; it still arrives on its own subject.
        natsHandles(bus).nc.publish('after.reply', encodeJson({ for: req.session_id }));
      });
      ctx.afterReply(() => {
        throw new Error('bookkeeping failed');
      });
      order.push('handler');
      return { messages: [] };
    });
    const reply = await request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-8', limit: 5 });
    order.push('reply');
    expect(reply).toEqual({ messages: [] });
    for await (const m of sub) {
      expect(decodeJson(m.data)).toEqual({ ok: true, value: { for: 'chat-8' } });
      break;
    }
    expect(order.slice(0, 2)).toEqual(['handler', 'after']);
    // The responder keeps answering.
    expect(await request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-9', limit: 5 })).toEqual({ messages: [] });
  });

  it('a request that fails its schema gets invalid_payload with the issues, and the responder keeps answering', async () => {
    const bus = await open();
    let handled = 0;
    serve(bus, contracts.sessionRead, async () => {
      handled++;
      return { messages: [] };
    });

    const reply = await rawRequest(bus, bus.subjects.sessionRead, encodeJson({ user_id: 'alice', limit: 0, extra: true }));

    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_payload', retryable: false } });
    const issues = (reply as { error: { details: { issues: { path: string }[] } } }).error.details.issues;
    expect(issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/session_id', '/limit', '/extra']));
    expect(handled).toBe(0);
    await expect(request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-7' })).resolves.toEqual({ messages: [] });
    expect(handled).toBe(1);
  });

  it('a body that is not JSON gets invalid_payload, and the responder keeps answering', async () => {
    const bus = await open();
    serve(bus, contracts.sessionRead, async () => ({ messages: [] }));

    const reply = await rawRequest(bus, bus.subjects.sessionRead, new TextEncoder().encode('{not json'));

    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_payload', retryable: false, message: expect.stringContaining('not valid JSON') } });
    await expect(request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-7' })).resolves.toEqual({ messages: [] });
  });

  it('a ReplyError thrown by the handler reaches the caller as a RemoteError with the same wire error', async () => {
    const bus = await open();
    const wire = wireError('not_found', 'no session chat-7 for alice', { session_id: 'chat-7' });
    serve(bus, contracts.sessionRead, async () => {
      throw new ReplyError(wire);
    });

    const err: unknown = await request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-7' }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(RemoteError);
    const remote = err as RemoteError;
    expect(remote.code).toBe('not_found');
    expect(remote.wire).toEqual(wire);
    expect(remote.retryable).toBe(false);
    expect(remote.subject).toBe(bus.subjects.sessionRead);
  });

  it('a handler that throws a plain Error is answered as internal, without its message or stack', async () => {
    const bus = await open();
    serve(bus, contracts.sessionRead, async () => {
      throw new Error('database password is hunter2');
    });

    const raw = await natsHandles(bus).nc.request(bus.subjects.sessionRead, encodeJson({ user_id: 'alice', session_id: 'chat-7' }), { timeout: 2_000 });
    const text = new TextDecoder().decode(raw.data);
    const err: unknown = await request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-7' }).catch((e: unknown) => e);

    expect(JSON.parse(text)).toMatchObject({ ok: false, error: { code: 'internal', retryable: true } });
    expect(text).not.toContain('hunter2');
    expect(text).not.toMatch(/\bat .+:\d+:\d+/);
    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('internal');
  });

  it('a handler that JetStream does not answer is answered unavailable, which callers wait out as an outage', async () => {
    const bus = await open();
    serve(bus, contracts.sessionRead, async () => {
      // No stream captures this subject: the server answers no one, as with no stream leader
      // during a cluster election (the client throws its JetStreamNotEnabled).
      await natsHandles(bus).js.publish(`${bus.subjects.sessionRead}.no-stream-here`, 'x', { timeout: 2_000 });
      return { messages: [] };
    });

    const err: unknown = await request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-7' }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('unavailable');
    expect((err as RemoteError).retryable).toBe(true);
    expect(isUnansweredRequest(err)).toBe(true);
  });

  it('a handler result that breaks the reply contract is answered as internal', async () => {
    const bus = await open();
    serve(bus, contracts.sessionRead, async () => ({ messages: [{ ...stored, tokens: -1 }] }));

    const err: unknown = await request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 'chat-7' }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('internal');
  });

  it('a request nobody serves fails fast with no_responders', async () => {
    const bus = await open();
    const started = Date.now();

    const err: unknown = await request(bus, contracts.toolsList, {}, { timeoutMs: 3_000 }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('no_responders');
    expect((err as RemoteError).retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a responder that does not answer in time fails with timeout', async () => {
    const bus = await open();
    serve(bus, contracts.toolsList, () => new Promise(() => {}));

    const err: unknown = await request(bus, contracts.toolsList, {}, { timeoutMs: 200 }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('timeout');
  });

  it('a reply that breaks the envelope contract is reported as invalid_payload', async () => {
    const bus = await open();
    natsHandles(bus).nc.subscribe(bus.subjects.toolsList, { callback: (_err, msg) => void msg.respond(encodeJson({ tools: [] })) });

    const err: unknown = await request(bus, contracts.toolsList, {}).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('invalid_payload');
  });
});

describe('outgoing payload checks', () => {
  it('request with an invalid payload throws OutgoingPayloadError and sends nothing', async () => {
    const bus = await open();
    let handled = 0;
    serve(bus, contracts.sessionRead, async () => {
      handled++;
      return { messages: [] };
    });

    const invalid = { user_id: 'alice' } as SessionReadRequest;
    const err: unknown = await request(bus, contracts.sessionRead, invalid).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(OutgoingPayloadError);
    expect((err as OutgoingPayloadError).code).toBe('invalid_payload');
    expect((err as OutgoingPayloadError).issues).toEqual([expect.objectContaining({ path: '/session_id' })]);
    await natsHandles(bus).nc.flush();
    expect(handled).toBe(0);
  });

  it('publish with an invalid payload throws OutgoingPayloadError and stores nothing', async () => {
    const bus = await open();
    await bus.ensureStreams(['runtimeJobs']);
    const seen: string[] = [];
    natsHandles(bus).nc.subscribe(bus.subjects.runtimeJobs, { callback: (_err, msg) => void seen.push(msg.subject) });

    const invalid = { ...runtimeJob('j1'), model_role: 'oracle' } as unknown as ReturnType<typeof runtimeJob>;
    await expect(bus.publish(contracts.runtimeJobs, invalid)).rejects.toBeInstanceOf(OutgoingPayloadError);

    await natsHandles(bus).nc.flush();
    await sleep(50);
    expect(seen).toEqual([]);
    const info = await natsHandles(bus).jsm.streams.info(bus.subjects.streams.runtimeJobs);
    expect(info.state.messages).toBe(0);
    const ack = await bus.publish(contracts.runtimeJobs, runtimeJob('j2'));
    expect(ack?.seq).toBe(1);
  });
});

/** `depth` nested arrays as JSON text. */
const deepText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('payload limits on the bus', () => {
  it('a request nested 5,000 deep gets a payload_limit reply naming limit and path, and the responder keeps answering', async () => {
    const bus = await open();
    let handled = 0;
    serve(bus, contracts.sessionRead, async () => {
      handled++;
      return { messages: [] };
    });
    const body = new TextEncoder().encode(`{"user_id":"alice","session_id":"s","extra":${deepText(5000)}}`);
    const decoded = decodeJson((await natsHandles(bus).nc.request(bus.subjects.sessionRead, body, { timeout: 5_000 })).data);
    expect(decoded).toMatchObject({
      ok: true,
      value: { ok: false, error: { code: 'payload_limit', retryable: false, details: { limit: 'maxDepth', max: 64, actual: 5001 } } },
    });
    expect(handled).toBe(0);
    await expect(request(bus, contracts.sessionRead, { user_id: 'alice', session_id: 's' })).resolves.toEqual({ messages: [] });
  });

  it("a request is decoded within its contract's own limits (a memory write)", async () => {
    const bus = await open();
    serve(bus, contracts.sessionAppend, async () => ({ messages: [] }));
    // 43 levels: within the envelope's 64, over the 36 of a memory write.
    const body = new TextEncoder().encode(`{"user_id":"u1","session_id":"s1","messages":[{"role":"user","content":"x","x":${deepText(40)}}]}`);
    const raw = await natsHandles(bus).nc.request(bus.subjects.sessionAppend, body, { timeout: 5_000 });
    expect(decodeJson(raw.data)).toMatchObject({
      ok: true,
      value: { ok: false, error: { code: 'payload_limit', details: { limit: 'maxDepth', max: 36, actual: 43, path: `/messages/0/x${'/0'.repeat(33)}` } } },
    });
  });

  it('bad UTF-8 gets invalid_payload, not a replaced character', async () => {
    const bus = await open();
    serve(bus, contracts.sessionRead, async () => ({ messages: [] }));
    const body = Uint8Array.from([...new TextEncoder().encode('{"user_id":"'), 0xff, ...new TextEncoder().encode('","session_id":"s"}')]);
    const decoded = decodeJson((await natsHandles(bus).nc.request(bus.subjects.sessionRead, body, { timeout: 5_000 })).data);
    expect(decoded).toMatchObject({ ok: true, value: { ok: false, error: { code: 'invalid_payload', message: expect.stringMatching(/UTF-8/) } } });
  });

  it('publishing or requesting over a contract limit throws PayloadLimitError before anything is sent', async () => {
    const bus = await open();
    const polluted = JSON.parse('{"memory_id":"m1","user_id":"u1","source":{"__proto__":{"x":1}}}') as MemoryWriteJob;
    await expect(bus.publish(contracts.memoryWrite, polluted)).rejects.toBeInstanceOf(PayloadLimitError);
    await expect(bus.publish(contracts.memoryWrite, polluted)).rejects.toMatchObject({
      wire: { code: 'payload_limit', details: { limit: 'forbiddenKey', path: '/source/__proto__' } },
    });
    const content = 'x'.repeat(1024 * 1024 + 1);
    await expect(request(bus, contracts.sessionAppend, { user_id: 'u1', session_id: 's1', messages: [{ role: 'user', content }] })).rejects.toMatchObject({
      name: 'PayloadLimitError',
      wire: { details: { limit: 'maxStringLength', path: '/messages/0/content' } },
    });
  });

  it('a value JSON cannot encode throws PayloadEncodingError, not a transport error', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeJson(cyclic)).toThrow(PayloadEncodingError);
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => encodeJson(deep)).toThrow(PayloadEncodingError);
  });

  it('a work message over its contract limits is terminated and reported, never handled', async () => {
    const bus = await open();
    await bus.ensureStreams(['memoryJobs']);
    await bus.ensureConsumers(['memoryWrites']);
    const invalid: string[] = [];
    const handled: unknown[] = [];
    const deadLettered: WireError[] = [];
    const consumer = await consumeContract(
      bus,
      contracts.memoryWrite,
      {
        stream: bus.subjects.streams.memoryJobs,
        durable: bus.subjects.consumers.memoryWrites,
        onInvalid: async (_msg, issues) => void invalid.push(issues[0]!.message),
        onDeadLetter: (_msg, error) => void deadLettered.push(error),
      },
      async (job) => void handled.push(job),
    );
    await natsHandles(bus).js.publish(bus.subjects.memoryWrite, new TextEncoder().encode(`{"deep":${deepText(100_000)}}`));
    await eventually(() => (invalid.length === 1 ? invalid : undefined), 10_000, 'the deep message reported');
    expect(invalid[0]).toMatch(/nests 100001 levels deep, over the maximum of 36/);
    expect(handled).toEqual([]);
    // Its dead letter says which limit it broke, not just that it was invalid.
    await eventually(() => deadLettered.length === 1, 10_000, 'the deep message dead-lettered');
    expect(deadLettered[0]).toMatchObject({ code: 'payload_limit', retryable: false, details: { limit: 'maxDepth' } });
    await consumer.stop(1_000);
  });
});
