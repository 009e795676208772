import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LlmClient, LlmError, semaphorePermits, type LlmClientOptions, type RoleEndpoint } from '@hermes/llm';
import { DistributedSemaphore, readPoolStatus } from '@hermes/semaphore';
import { cleanupAll, eventually, lastUserMessageText, startNatsServer, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';

let natsUrl: string;
let model: ScriptedLlm;
const opened: { close(): Promise<void> }[] = [];
let buckets = 0;

beforeAll(async () => {
  natsUrl = (await startNatsServer()).url;
  // "hold" keeps the only permit busy for a while; everything else answers at once.
  model = await startScriptedLlm({
    responder: ({ body }) => (lastUserMessageText(body) === 'hold' ? { content: 'held', delayMs: 800 } : { content: 'ok' }),
  });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close().catch(() => {})));
  model.clearQueue();
  model.resetStats();
});
afterAll(async () => {
  await cleanupAll();
});

/** An LlmClient whose calls go through a real DistributedSemaphore with one permit, on a fresh bucket. */
async function clientWithOnePermit(opts: Partial<LlmClientOptions> = {}, keepMs = 0): Promise<{ client: LlmClient; kv: KV }> {
  const nc: NatsConnection = await connect({ servers: natsUrl });
  const kv = await new Kvm(jetstream(nc)).create(`llm_permits_${++buckets}`, { history: 1 });
  const sem = await DistributedSemaphore.open({ kv, poolSettings: () => ({ capacity: 1 }), keepMs });
  opened.push({ close: async () => (await sem.close(), await nc.close()) });
  const worker: RoleEndpoint = { baseUrl: model.baseUrl, apiKey: 'k', model: 'm' };
  const client = new LlmClient({
    roles: { worker, planner: worker, summarizer: worker, embedder: worker },
    permits: semaphorePermits(sem),
    maxRetries: 2,
    ...opts,
  });
  return { client, kv };
}

const ask = (content: string) => [{ role: 'user' as const, content }];

async function rejection(p: Promise<unknown>): Promise<LlmError> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LlmError);
  return err as LlmError;
}

describe('LlmClient through the distributed semaphore', () => {
  it('a call given a reservation uses its permit rather than asking the pool for another', async () => {
    // One permit, and a short permit wait: a call that ignored its reservation would time out.
    const { client, kv } = await clientWithOnePermit({ permitTimeoutMs: 500 }, 5000);
    const pool = `pool.${client.poolFor('worker')}`;
    expect(client.reserve('worker')).toBeUndefined(); // no permit kept yet
    await client.chat({ role: 'worker', messages: ask('first') });
    const kept = (await kv.get(pool))!.revision;
    const reservation = client.reserve('worker')!;
    expect(reservation).toBeDefined();
    await client.chat({ role: 'worker', messages: ask('second'), reservation });
    expect(await reservation.claim()).toBeUndefined(); // the call claimed it
    // Kept, reserved, claimed and kept again: the pool was not written once.
    expect((await kv.get(pool))!.revision).toBe(kept);
    expect(model.requests).toHaveLength(2);
  });

  it('a call that gets no permit in time fails with llm_permit_timeout, retryable, without reaching the model', async () => {
    const { client } = await clientWithOnePermit({ permitTimeoutMs: 300 });
    const holding = client.chat({ role: 'worker', messages: ask('hold') });
    await eventually(() => model.requests.length === 1, 5_000, 'the call to reach the model');

    const started = Date.now();
    const err = await rejection(client.chat({ role: 'worker', messages: ask('blocked') }));
    const waited = Date.now() - started;

    expect(err).toMatchObject({ code: 'llm_permit_timeout', retryable: true, details: { pool: client.poolFor('worker') } });
    expect(err.toWire()).toMatchObject({ code: 'llm_permit_timeout', retryable: true });
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(1000);
    expect(model.requests).toHaveLength(1);
    await holding;
  });

  it('an aborted signal abandons the wait for a permit at once', async () => {
    const { client, kv } = await clientWithOnePermit();
    const holding = client.chat({ role: 'worker', messages: ask('hold') });
    await eventually(() => model.requests.length === 1, 5_000, 'the call to reach the model');

    const ac = new AbortController();
    const waiting = rejection(client.chat({ role: 'worker', messages: ask('cancelled'), signal: ac.signal }));
    await new Promise((r) => setTimeout(r, 100));
    const abortedAt = Date.now();
    ac.abort();
    const err = await waiting;

    expect(Date.now() - abortedAt).toBeLessThan(50);
    expect(err).toMatchObject({ code: 'llm_timeout', details: { pool: client.poolFor('worker') } });
    expect(err.message).toMatch(/abort/);
    // A signal aborted before the call never queues at all.
    await expect(client.chat({ role: 'worker', messages: ask('too late'), signal: AbortSignal.abort() })).rejects.toBeInstanceOf(LlmError);
    expect((await readPoolStatus(kv))[0]).toMatchObject({ in_use: 1, waiters: 0 });
    await holding;
    expect(model.requests).toHaveLength(1);
  });

  it('calls their callers abort mid-flight do not count as provider failures (no pool-wide back-off)', async () => {
    const { client, kv } = await clientWithOnePermit();
    for (let i = 0; i < 3; i++) {
      model.enqueue({ hang: true });
      const ac = new AbortController();
      const call = rejection(client.chat({ role: 'worker', messages: ask(`cancel me ${i}`), signal: ac.signal }));
      await eventually(() => model.requests.length === i + 1, 5_000, 'the call to reach the model');
      ac.abort();
      expect((await call).code).toBe('llm_timeout');
    }

    expect((await readPoolStatus(kv))[0]).toMatchObject({ in_use: 0, consecutive_failures: 0, backoff_until: null });
    const started = Date.now();
    await client.chat({ role: 'worker', messages: ask('next') });
    expect(Date.now() - started).toBeLessThan(500);
  });
});
