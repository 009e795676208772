import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_SAMPLE_MS, QueueGauge, request } from '@hermes/bus';
import { natsHandles } from '@hermes/bus/internal';
import { contracts, taskEventData, type TaskEvent } from '@hermes/contracts';
import { eventually } from '@hermes/testkit';
import { ModelScript } from './model-script.js';
import { API_KEY, startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

// One runtime taking one job at a time from a model that answers in 500 ms: about 2 jobs/s, so 60
// tasks queue for ~30 s. Above 10 s of expected wait new submissions are refused; from 2 s on the
// accepted event says how long the wait is. A stack of its own (its settings are not stock).
const BATCH = 60;
const NOTICE_MS = 2000;
const MAX_MS = 10_000;
let stack: Stack;
let script: ModelScript;
let gauge: QueueGauge;

beforeAll(async () => {
  stack = await startStack({
    env: { RUNTIME_CONCURRENCY: '1', ADMISSION_NOTICE_WAIT_MS: String(NOTICE_MS), ADMISSION_MAX_WAIT_MS: String(MAX_MS) },
  });
  script = new ModelScript(stack.llm);
  stack.llm.setLatency(500);
  // The test's own gauge reads the same consumer the same way, to know when to submit.
  gauge = new QueueGauge(stack.bus).start();
}, 120_000);

afterAll(async () => {
  gauge?.stop();
  await stack?.stop();
});

const deadLetters = async () => (await natsHandles(stack.bus).jsm.streams.info(stack.bus.subjects.streams.deadLetters)).state.messages;

describe('admission control behind a saturated runtime', () => {
  it('refuses over the bound (bus: rejected overloaded, HTTP: 503 with Retry-After), tells the wait below it, and loses none it accepted', async () => {
    const watches = [];
    for (let i = 0; i < BATCH; i++) {
      const goal = `admission: queued task ${i}`;
      script.on(goal, []);
      // Generous: the whole batch drains at ~2 jobs/s on a quiet machine, far slower on a loaded one.
      watches.push(watchTask(stack.bus, await submit(stack.bus, { user_id: 'adm-alice', goal }), 300_000));
    }
    // Once the gauge has measured the runtimes' pace with the queue full, the wait is well over 10 s;
    // a sample period later the dispatchers' gauges, sampling on their own clocks, have measured it too.
    const overBound = () => (gauge.estimate()?.estimated_wait_ms ?? 0) > MAX_MS * 1.5;
    await eventually(overBound, 60_000, 'an expected wait over the bound');
    await new Promise((r) => setTimeout(r, QUEUE_SAMPLE_MS * 1.5));
    expect(overBound()).toBe(true);
    const deadBefore = await deadLetters();

    const refusedGoal = 'admission: refused on the bus';
    script.on(refusedGoal, []);
    const refused = watchTask(stack.bus, await submit(stack.bus, { user_id: 'adm-alice', goal: refusedGoal }), 60_000);
    const rejection = await refused.next((e) => e.type.endsWith('.rejected'), 30_000);
    const data = taskEventData(rejection, 'rejected')!;
    expect(data.error).toMatchObject({ code: 'overloaded', retryable: true });
    expect(data.error.details).toMatchObject({ retry_after_ms: expect.any(Number), jobs_ahead: expect.any(Number) });
    expect((data.error.details as { retry_after_ms: number }).retry_after_ms).toBeGreaterThanOrEqual(1000);
    // Not stored, and not dead-lettered: nothing is wrong with it, it came at a bad time.
    await expect(request(stack.bus, contracts.taskGet, { task_id: refused.taskId })).rejects.toMatchObject({ code: 'not_found' });
    expect(await deadLetters()).toBe(deadBefore);

    const res = await fetch(`${stack.gatewayUrl}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', 'idempotency-key': 'admission-http-1' },
      body: JSON.stringify({ goal: 'admission: refused over HTTP' }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({ code: 'overloaded', retryable: true, details: { retry_after_ms: expect.any(Number) } });

    // As the queue drains, a submission expected to wait between the notice and the bound is
    // accepted with its wait (margins on both sides: the dispatcher samples on its own clock).
    await eventually(
      () => {
        const wait = gauge.estimate()?.estimated_wait_ms ?? 0;
        return wait > NOTICE_MS * 2 && wait < MAX_MS * 0.6;
      },
      120_000,
      'an expected wait between the notice and the bound',
    );
    const noticedGoal = 'admission: accepted with its wait';
    script.on(noticedGoal, []);
    const noticed = watchTask(stack.bus, await submit(stack.bus, { user_id: 'adm-alice', goal: noticedGoal }), 300_000);
    const accepted = await noticed.next((e) => e.type.endsWith('.accepted'), 30_000);
    const queue = taskEventData(accepted, 'accepted')!.queue;
    expect(queue?.jobs_ahead).toBeGreaterThan(0);
    expect(queue?.estimated_wait_ms).toBeGreaterThanOrEqual(NOTICE_MS);

    // Every task that was accepted completes, once.
    const ends = await Promise.all([...watches, noticed].map((w) => w.done));
    expect(ends.map((events) => outcomeOf(events).kind)).toEqual(Array(BATCH + 1).fill('completed'));
    expect(ends.map((events: TaskEvent[]) => events.filter((e) => e.type.endsWith('.completed')).length)).toEqual(Array(BATCH + 1).fill(1));

    // And once the queue is empty a submission is accepted without a queue.
    await eventually(() => gauge.estimate()?.jobs_ahead === 0, 60_000, 'the queue to drain');
    script.on('admission: accepted at once', []);
    const after = watchTask(stack.bus, await submit(stack.bus, { user_id: 'adm-alice', goal: 'admission: accepted at once' }), 60_000);
    const quick = await after.next((e) => e.type.endsWith('.accepted'), 30_000);
    expect(taskEventData(quick, 'accepted')!.queue).toBeUndefined();
    expect(outcomeOf(await after.done).kind).toBe('completed');
  }, 480_000);
});
