import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { StoredStateError } from '@hermes/contracts';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { CheckpointConflictError, CheckpointStore, type Checkpoint } from '../src/checkpoint-store.js';
import { rejectionOf } from './runtime-fixture.js';
import { connectBus, uniquePrefix } from './support.js';

let nats: NatsServerHandle;
const buses: Bus[] = [];

/** Two runtimes' stores on one checkpoint bucket of its own. */
async function stores() {
  const prefix = uniquePrefix('cp');
  const [a, b] = await Promise.all([connectBus(nats.url, prefix), connectBus(nats.url, prefix)]);
  buses.push(a, b);
  const kv = await a.kv('checkpoints');
  const bucket = a.subjects.buckets.checkpoints;
  return {
    kv,
    store: new CheckpointStore({ kv, bucket }),
    other: new CheckpointStore({ kv: await b.kv('checkpoints'), bucket }),
    bucket,
    maxPayload: a.maxPayload!,
  };
}

/** A checkpoint as a runtime of the previous release wrote it (libs/contracts keeps the fixtures). */
const historical = (): Checkpoint =>
  JSON.parse(
    readFileSync(new URL('../../../libs/contracts/test/fixtures/stored.checkpoint.v1.resumed-with-tool-results.json', import.meta.url), 'utf8'),
  ) as Checkpoint;

const usage = (n = 0) => ({ input_tokens: 10 * n, output_tokens: n });
const user = (content: string) => ({ role: 'user' as const, content });
const assistantCalls = (step: number) => ({
  role: 'assistant' as const,
  content: null,
  tool_calls: [{ id: `call_${step}`, type: 'function' as const, function: { name: 'probe', arguments: JSON.stringify({ n: step }) } }],
});
const toolResult = (step: number, content: string) => ({ role: 'tool' as const, tool_call_id: `call_${step}`, content });

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('CheckpointStore', () => {
  it('resumes a checkpoint an earlier release wrote, and saves the next one over it', async () => {
    const { kv, store } = await stores();
    const cp = historical();
    await kv.put(`job.${cp.job_id}`, JSON.stringify(cp));

    const delivery = store.open(cp.job_id);
    const loaded = await delivery.load();
    expect(loaded).toEqual(cp);
    const next = { ...loaded!, step: loaded!.step + 1, messages: [...loaded!.messages, { role: 'assistant' as const, content: 'the answer' }] };
    await delivery.save(next);

    // Rewritten as a head and one fresh turn holding the whole conversation, which reads back whole.
    const resumed = await store.open(cp.job_id).load();
    expect(resumed?.step).toBe(cp.step + 1);
    expect(resumed?.messages).toEqual(next.messages);
    expect(resumed?.calls).toEqual(cp.calls);
    expect((await kv.get(`job.${cp.job_id}`))?.json<{ v: number }>().v).toBe(2);
  });

  it('an unreadable checkpoint is a StoredStateError naming the bucket and key, not a checkpoint', async () => {
    const { kv, store, bucket } = await stores();
    await kv.put('job.j_bad', JSON.stringify({ v: 1, job_id: 'j_bad', step: 2, messages: 'lost' }));

    const err = await store
      .open('j_bad')
      .load()
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    expect(err).toBeInstanceOf(StoredStateError);
    expect(err).toMatchObject({ code: 'corrupt_state', retryable: false, bucket, key: 'job.j_bad' });
    expect((err as StoredStateError).issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/messages', '/usage', '/calls', '/pending']));
  });

  it('a runtime that saves after another took the job over gets CheckpointConflictError', async () => {
    const { store, other } = await stores();
    const cp = { ...historical(), job_id: 'j_taken' };
    const first = store.open('j_taken');
    expect(await first.load()).toBeUndefined();
    await first.save(cp);
    const takeover = other.open('j_taken');
    // Read back from the head and its turn records; `v` is only on a v1 record read as it was.
    expect(await takeover.load()).toEqual({ ...cp, v: undefined });
    await takeover.save({ ...cp, step: cp.step + 1 });

    await expect(first.save({ ...cp, step: cp.step + 2 })).rejects.toBeInstanceOf(CheckpointConflictError);
  });

  it('a redelivery claims the fence on load: the earlier holder learns it before its next LLM call, not at its next write', async () => {
    const { kv, bucket } = await stores();
    // recheckAfterMs 0: as if the holder had been paused past half its ack wait.
    const paused = new CheckpointStore({ kv, bucket, recheckAfterMs: 0 });
    const cp = { ...historical(), job_id: 'j_claimed' };
    const first = paused.open('j_claimed');
    await first.load();
    await first.save(cp);
    await first.stillHeld();

    const next = new CheckpointStore({ kv, bucket }).open('j_claimed');
    expect(await next.load({ claim: true })).toEqual({ ...cp, v: undefined });
    await expect(first.stillHeld()).rejects.toBeInstanceOf(CheckpointConflictError);
    // The claim changed nothing but the revision: the new holder goes on from the same state.
    await next.save({ ...cp, step: cp.step + 1 });
  });

  it('a save during a nats-server restart waits it out and lands, instead of losing the answer it holds', async () => {
    const own = await startNatsServer();
    const bus = await connectBus(own.url, uniquePrefix('cpo'));
    buses.push(bus);
    const kv = await bus.kv('checkpoints');
    const store = new CheckpointStore({ kv, bucket: bus.subjects.buckets.checkpoints, outageBudgetMs: 60_000 });
    const cp = { ...historical(), job_id: 'j_outage' };
    const h = store.open('j_outage');
    await h.load();
    await h.save(cp);
    await own.kill();
    const saving = h.save({ ...cp, step: cp.step + 1 });
    await new Promise((r) => setTimeout(r, 2000));
    await own.restart();
    await saving;
    const back = await store.open('j_outage').load();
    expect(back?.step).toBe(cp.step + 1);
    expect(back?.messages).toEqual(cp.messages);
  });

  it('a runtime that lost the job writes its next turn beside, not over, the turns of the one that took over', async () => {
    const { store, other } = await stores();
    const cp: Checkpoint = { job_id: 'j_race', step: 1, messages: [user('go'), assistantCalls(1)], usage: usage(), calls: ['probe {}'], pending: true };
    const stale = store.open('j_race');
    await stale.load();
    await stale.save(structuredClone(cp));
    const takeover = other.open('j_race');
    const mine = (await takeover.load())!;
    mine.messages.push(toolResult(1, 'from the new owner'), assistantCalls(2));
    mine.step = 2;
    await takeover.save(mine);

    // The stale runtime's step 2, a different answer: its turn record goes under its own token, and its head write fails.
    const staleNext = structuredClone(cp);
    staleNext.messages.push(toolResult(1, 'from the stale runtime'), assistantCalls(2));
    staleNext.step = 2;
    await expect(stale.save(staleNext)).rejects.toBeInstanceOf(CheckpointConflictError);

    const resumed = await store.open('j_race').load();
    expect(resumed?.messages).toEqual(mine.messages);
  });

  it('a 250-step conversation with 20 KB tool results checkpoints in records of constant size under max_payload and reads back whole', async () => {
    const { kv, store, maxPayload } = await stores();
    const handle = store.open('j_long');
    await handle.load();
    const cp: Checkpoint = { job_id: 'j_long', step: 0, messages: [user('a long task')], usage: usage(), calls: [], pending: false };
    const headSizes = new Set<number>();
    let largestTurn = 0;
    for (let step = 1; step <= 250; step++) {
      if (step > 1) cp.messages.push(toolResult(step - 1, `${step - 1}:`.padEnd(20_000, 'x')));
      cp.messages.push(assistantCalls(step));
      cp.calls.push(`probe {"n":${step}}`);
      cp.step = step;
      cp.pending = true;
      cp.usage = usage(step);
      await handle.save(cp);
      headSizes.add((await kv.get('job.j_long'))!.length);
    }
    for await (const key of await kv.keys('job.j_long.>')) largestTurn = Math.max(largestTurn, (await kv.get(key))!.length);

    // The head holds counts and the fence; its size changes only with the digits of the numbers in it.
    expect(Math.max(...headSizes)).toBeLessThan(400);
    expect(largestTurn).toBeGreaterThan(20_000);
    expect(largestTurn).toBeLessThan(24_000);
    expect(largestTurn).toBeLessThan(maxPayload);
    const resumed = await store.open('j_long').load();
    expect(resumed).toEqual({ ...cp, session_written: undefined });
    expect(resumed!.messages).toHaveLength(1 + 250 + 249);
  });

  it('a content over the inline bound is stored once by its hash and read back from there', async () => {
    const { kv, bucket } = await stores();
    const store = new CheckpointStore({ kv, bucket, inlineBytes: 1_000 });
    const handle = store.open('j_blob');
    await handle.load();
    const big = 'the same large result '.repeat(100);
    const cp: Checkpoint = { job_id: 'j_blob', step: 1, messages: [user('go'), assistantCalls(1)], usage: usage(), calls: [], pending: true };
    await handle.save(cp);
    cp.messages.push(toolResult(1, big), assistantCalls(2));
    cp.step = 2;
    await handle.save(cp);
    cp.messages.push(toolResult(2, big), assistantCalls(3));
    cp.step = 3;
    await handle.save(cp);

    const keys: string[] = [];
    for await (const key of await kv.keys('job.j_blob.>')) keys.push(key);
    const blobs = keys.filter((k) => k.startsWith('job.j_blob.blob.'));
    expect(blobs).toHaveLength(1);
    expect((await kv.get(blobs[0]!))!.string()).toBe(big);
    const turns = keys.filter((k) => !k.startsWith('job.j_blob.blob.'));
    for (const k of turns) expect((await kv.get(k))!.length).toBeLessThan(1_000);
    expect((await store.open('j_blob').load())?.messages).toEqual(cp.messages);
  });

  it('a conversation replaced by compaction is stored afresh and reads back as the compacted one', async () => {
    const { store } = await stores();
    const handle = store.open('j_fold');
    await handle.load();
    const cp: Checkpoint = { job_id: 'j_fold', step: 1, messages: [user('go'), assistantCalls(1)], usage: usage(), calls: ['probe {}'], pending: true };
    await handle.save(cp);
    cp.messages = [user('summary of what came before'), toolResult(1, 'kept')];
    cp.messages.push(assistantCalls(2));
    cp.step = 2;
    await handle.save(cp);

    expect((await store.open('j_fold').load())?.messages).toEqual(cp.messages);
  });

  it('a head naming a turn the bucket lacks is a StoredStateError, not a shorter conversation', async () => {
    const { kv, store, bucket } = await stores();
    const handle = store.open('j_gap');
    await handle.load();
    const cp: Checkpoint = { job_id: 'j_gap', step: 1, messages: [user('go'), assistantCalls(1)], usage: usage(), calls: [], pending: true };
    await handle.save(cp);
    cp.messages.push(toolResult(1, 'r'), assistantCalls(2));
    cp.step = 2;
    await handle.save(cp);
    const turnKeys: string[] = [];
    for await (const key of await kv.keys('job.j_gap.>')) turnKeys.push(key);
    await kv.purge(turnKeys.find((k) => k.endsWith('.1'))!);

    const err = await rejectionOf(store.open('j_gap').load());
    expect(err).toBeInstanceOf(StoredStateError);
    expect(err).toMatchObject({ code: 'corrupt_state', retryable: false, bucket, record: 'StoredCheckpointTurn' });
  });
});
