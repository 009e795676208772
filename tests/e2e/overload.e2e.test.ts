import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEventKind, type TaskEvent } from '@hermes/contracts';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

// One runtime running one job at a time is the tightest cap there is: every other job waits in
// the queue. Each model call takes 1 s, so the eighth task waits about 7 s before it starts,
// well past SUBTASK_TIMEOUT_MS (4 s: a job's own start-up, recall included, on a loaded 2-core
// machine stays far inside it). No retries: a timeout would fail its task outright.
const TIMEOUT_MS = 4000;
const CALL_MS = 1000;
const TASKS = 8;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    env: { SUBTASK_TIMEOUT_MS: String(TIMEOUT_MS), SUBTASK_MAX_RETRIES: '0', RUNTIME_CONCURRENCY: '1' },
  });
  stack.llm.setResponder((req) => {
    const user = req.body.messages?.findLast((m) => m.role === 'user');
    const text = typeof user?.content === 'string' ? user.content : '';
    return /slow/.test(text) ? { content: 'too late', delayMs: TIMEOUT_MS * 3 } : { content: 'queued answer', delayMs: CALL_MS };
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const eventTime = (events: TaskEvent[], kind: string) => Date.parse(events.find((e) => taskEventKind(e) === kind)?.time ?? 'NaN');

describe('subtask deadlines count from the start of the job', () => {
  it('subtasks queued longer than SUBTASK_TIMEOUT_MS behind a cap of one job all complete', async () => {
    const ids = await Promise.all(Array.from({ length: TASKS }, (_, i) => submit(stack.bus, { user_id: 'alice', goal: `queued task ${i}` })));
    // Generous: eight 1 s calls one after another, on a loaded 2-core machine.
    const runs = await Promise.all(ids.map((id) => watchTask(stack.bus, id, 90_000).done));
    expect(runs.map(outcomeOf)).toEqual(ids.map(() => ({ kind: 'completed', output: 'queued answer' })));
    // The queue really was longer than the timeout: some task waited past it before its job started.
    const waits = runs.map((events) => eventTime(events, 'started') - eventTime(events, 'accepted'));
    expect(Math.max(...waits)).toBeGreaterThan(TIMEOUT_MS);
  }, 120_000);

  it('a high-priority task submitted behind queued normal tasks starts before every one of them', async () => {
    const normal = await Promise.all(Array.from({ length: 4 }, (_, i) => submit(stack.bus, { user_id: `normal-${i}`, goal: `queued normal ${i}` })));
    const watches = normal.map((id) => watchTask(stack.bus, id, 90_000));
    // One of them holds the one job slot; the other three wait in the runtime job queue.
    await Promise.race(watches.map((w) => w.next((e) => taskEventKind(e) === 'started', 30_000)));
    const high = await submit(stack.bus, { user_id: 'urgent', goal: 'an urgent task', priority: 'high' });
    const highRun = await watchTask(stack.bus, high, 90_000).done;
    const runs = await Promise.all(watches.map((w) => w.done));
    expect([highRun, ...runs].map(outcomeOf)).toEqual([high, ...normal].map(() => ({ kind: 'completed', output: 'queued answer' })));
    // Its job went on the ahead lane: in stream order it would have started after all four.
    const highStart = eventTime(highRun, 'started');
    expect(runs.filter((events) => eventTime(events, 'started') > highStart)).toHaveLength(3);
  }, 120_000);

  it('a job that runs longer than SUBTASK_TIMEOUT_MS once started is stopped and its task fails subtask_timeout', async () => {
    const id = await submit(stack.bus, { user_id: 'alice', goal: 'a slow task' });
    // Generous: the job is stopped after 4 s, the model would answer after 12 s.
    const events = await watchTask(stack.bus, id, 60_000).done;
    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'subtask_timeout' });
  }, 90_000);
});
