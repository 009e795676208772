import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, eventually, startNatsServer, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';
import { assertBuilt, sender, served, sleep, startHammer, type Hammer, type HammerOptions } from './hammer-harness.js';

// Every worker here is a real child process running the built @hermes/llm (openLlmClient, the
// DistributedSemaphore on a real nats-server), calling the scripted model, which records the
// highest number of requests it had in flight at once.

let natsUrl: string;
let buckets = 0;
const started: Hammer[] = [];
const models: ScriptedLlm[] = [];

beforeAll(async () => {
  assertBuilt();
  natsUrl = (await startNatsServer()).url;
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.service.kill()));
  await Promise.all(models.splice(0).map((m) => m.close()));
});
afterAll(async () => {
  await cleanupAll();
});

const note = (what: string, value: unknown) => {
  if (process.env['HERMES_TEST_VERBOSE']) process.stderr.write(`[measured] ${what}: ${JSON.stringify(value)}\n`);
};

async function model(opts: Parameters<typeof startScriptedLlm>[0] = {}): Promise<ScriptedLlm> {
  const m = await startScriptedLlm(opts);
  models.push(m);
  return m;
}

/** Workers sharing one fresh bucket and one model. */
function cluster(llm: ScriptedLlm, common: HammerOptions['env'] = {}) {
  const bucket = `llm_sem_${++buckets}`;
  return async (name: string, env: HammerOptions['env'] = {}) => {
    const h = await startHammer(name, { natsUrl, bucket, llm, env: { ...common, ...env } });
    started.push(h);
    return h;
  };
}

describe('the LLM semaphore across processes', () => {
  it('never lets more than capacity calls reach the model at once, and uses all of it under load', async () => {
    const capacity = 4;
    const llm = await model({ latencyMs: 50 });
    const worker = cluster(llm, { LLM_DEFAULT_CAPACITY: capacity, LOOPS: 4, DURATION_MS: 3000, LLM_PERMIT_TIMEOUT_MS: 15_000 });

    const hammers = await Promise.all(['a', 'b', 'c'].map((name) => worker(name)));
    const summaries = await Promise.all(hammers.map((h) => h.done()));

    note('hard cap', { maxInFlight: llm.maxInFlight, requests: llm.requests.length, perWorker: summaries.map((s) => [s.worker, s.ok, s.maxLocalInFlight]) });
    expect(llm.maxInFlight).toBeLessThanOrEqual(capacity);
    expect(llm.maxInFlight).toBeGreaterThanOrEqual(capacity - 1);
    for (const s of summaries) {
      expect(s.errors).toEqual({});
      expect(s.ok).toBe(s.calls);
      // 12 loops want 12 calls at a time: each process did wait on the others.
      expect(s.maxLocalInFlight).toBeGreaterThan(1);
      expect(s.ok).toBeGreaterThan(10);
    }
    expect(llm.requests).toHaveLength(summaries.reduce((n, s) => n + s.calls, 0));
  });

  it('a call that stays alive keeps its permit for longer than several leases', async () => {
    const leaseMs = 1000;
    // Long enough that the other process, however slow to start, asks with over two leases to go.
    const longMs = 6000;
    const llm = await model({ responder: ({ body }) => ({ content: 'done', delayMs: sender(body) === 'long' ? longMs : 0 }) });
    const worker = cluster(llm, { LLM_DEFAULT_CAPACITY: 1, LLM_PERMIT_LEASE_MS: leaseMs, CALLS: 1 });

    const long = await worker('long');
    await eventually(() => served(llm).length === 1, 10_000, 'the long call to reach the model');
    const other = await worker('other');
    const [longSummary, otherSummary] = await Promise.all([long.done(), other.done()]);

    const [first, second] = served(llm);
    const waitedFrom = other.calls()[0]!.t0;
    note('long call', {
      longReceived: first!.receivedAt,
      otherStarted: waitedFrom,
      otherReceived: second!.receivedAt,
      otherWaitedMs: second!.receivedAt - waitedFrom,
    });
    expect([longSummary.ok, otherSummary.ok]).toEqual([1, 1]);
    expect(first!.w).toBe('long');
    expect(second!.w).toBe('other');
    // The other process asked while more than two leases of the long call were still to run...
    expect(first!.receivedAt + longMs - waitedFrom).toBeGreaterThan(2 * leaseMs);
    // ...and got nothing until it ended: the renewed permit was never counted as free.
    expect(second!.receivedAt).toBeGreaterThanOrEqual(first!.receivedAt + longMs);
  });

  it('a permit held by a process that is SIGKILLed comes back after about one lease, not before the kill', async () => {
    const leaseMs = 1000;
    const llm = await model({ responder: ({ body }) => ({ content: 'done', delayMs: sender(body) === 'doomed' ? 60_000 : 0 }) });
    const worker = cluster(llm, { LLM_DEFAULT_CAPACITY: 1, LLM_PERMIT_LEASE_MS: leaseMs, CALLS: 1 });

    const doomed = await worker('doomed');
    await eventually(() => served(llm).length === 1, 10_000, 'the doomed call to reach the model');
    const survivor = await worker('survivor');
    await survivor.ready;
    // Longer than a lease: a holder that is alive keeps renewing, so nothing gets through yet.
    await sleep(1.5 * leaseMs);
    expect(served(llm).map((r) => r.w)).toEqual(['doomed']);

    const killedAt = Date.now();
    await doomed.service.kill();
    const summary = await survivor.done();

    const through = served(llm)[1]!;
    note('killed holder', { leaseMs, grantedAfterKillMs: through.receivedAt - killedAt });
    expect(summary.ok).toBe(1);
    expect(through.w).toBe('survivor');
    expect(through.receivedAt).toBeGreaterThan(killedAt);
    // About one lease; the slack is for a loaded CI machine (the point is that it comes back by itself).
    expect(through.receivedAt - killedAt).toBeLessThanOrEqual(leaseMs + 2000);
  });

  it('serves a saturated pool in arrival order, so a late waiter is not starved by tight loops', async () => {
    const llm = await model({ latencyMs: 20 });
    const worker = cluster(llm, { LLM_DEFAULT_CAPACITY: 1, LOOPS: 1, LLM_PERMIT_TIMEOUT_MS: 15_000 });

    const hammers = await Promise.all(['a', 'b', 'c'].map((name) => worker(name, { DURATION_MS: 3500 })));
    await eventually(() => ['a', 'b', 'c'].every((w) => served(llm).filter((r) => r.w === w).length >= 3), 10_000, 'all three hammers to be busy');
    const late = await worker('late', { CALLS: 1 });
    const lateSummary = await late.done();
    await Promise.all(hammers.map((h) => h.done()));

    const order = served(llm);
    const lateIndex = order.findIndex((r) => r.w === 'late');
    const lateT0 = order[lateIndex]!.t0;
    const overtakers = Object.fromEntries(['a', 'b', 'c'].map((w) => [w, order.slice(0, lateIndex).filter((r) => r.w === w && r.t0 > lateT0).length]));
    // Served before someone who had asked earlier. A hammer's calls are a round (~3 calls) apart,
    // so a small slack only forgives calls started while the other's queue entry was being written.
    const inversions = order.filter((r, i) => order.slice(i + 1).some((later) => later.t0 < r.t0 - 15)).length;
    note('fairness', { calls: order.length, lateWaitedMs: order[lateIndex]!.receivedAt - lateT0, overtakers, inversions, maxInFlight: llm.maxInFlight });

    expect(lateSummary.ok).toBe(1);
    // The hammers were still at it when the late waiter got its turn.
    expect(order.length - lateIndex).toBeGreaterThan(3);
    expect(llm.maxInFlight).toBe(1);
    for (const w of ['a', 'b', 'c']) expect(overtakers[w]).toBeLessThanOrEqual(1);
    // Of some 120 calls, a queue that is not first-come first-served inverts dozens. A process
    // starved of CPU for longer than the slack between starting its call and writing its queue
    // entry (seen with four busy processes beside the test) may invert one or two.
    expect(inversions).toBeLessThanOrEqual(2);
  });

  it('a 429 seen by one process pauses the pool for every process until Retry-After has passed', async () => {
    const latencyMs = 20;
    let rateLimited = false;
    const llm = await model({
      latencyMs,
      responder: ({ body }) => {
        if (sender(body) !== 'a' || rateLimited) return { content: 'ok' };
        rateLimited = true;
        return { status: 429, retryAfterSeconds: 1 };
      },
    });
    const worker = cluster(llm, { LLM_DEFAULT_CAPACITY: 4 });

    const b = await worker('b', { LOOPS: 2, DURATION_MS: 5000 });
    await eventually(() => served(llm).filter((r) => r.w === 'b').length >= 5, 10_000, 'b to be busy');
    const a = await worker('a', { CALLS: 1 });
    const [aSummary, bSummary] = await Promise.all([a.done(), b.done()]);

    const order = served(llm);
    const limited = order.find((r) => r.w === 'a')!;
    // The 429 went out `latencyMs` after the request arrived.
    const answeredAt = limited.receivedAt + latencyMs;
    // The pause begins when a's report lands in the pool, a moment after the answer (longer on a
    // loaded machine): b's calls granted before that may still reach the model. Otherwise b calls
    // every ~20 ms, so the pause is the first gap of most of a second in what reaches the model.
    const times = [answeredAt, ...order.filter((r) => r.w === 'b' && r.receivedAt > answeredAt).map((r) => r.receivedAt)];
    const resumed = times.findIndex((t, i) => i > 0 && t - times[i - 1]! >= 900);
    const pauseStart = times[resumed - 1]!;
    const bResumedAt = times[resumed]!;
    const aRetried = order.filter((r) => r.w === 'a')[1]!;
    note('shared back-off', {
      pauseStartMs: pauseStart - answeredAt,
      bResumedAfterMs: bResumedAt - answeredAt,
      aRetriedAfterMs: aRetried.receivedAt - answeredAt,
    });

    expect(aSummary.ok).toBe(1);
    expect(bSummary.errors).toEqual({});
    expect(resumed).toBeGreaterThan(0);
    expect(pauseStart - answeredAt).toBeLessThan(500);
    expect(bResumedAt - answeredAt).toBeGreaterThanOrEqual(950);
    // Generous upper bound for loaded machines: the pause must end, not last.
    expect(bResumedAt - answeredAt).toBeLessThan(3000);
    expect(aRetried.receivedAt - answeredAt).toBeGreaterThanOrEqual(950);
    // Nothing at all reached the model during the pause.
    expect(order.filter((r) => r.receivedAt > pauseStart && r.receivedAt < answeredAt + 950)).toEqual([]);
  });
});
