import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goalOf, ModelScript } from './model-script.js';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

// One permit for the whole stack, so every LLM call queues on the semaphore and the order the
// model sees requests in is the order the semaphore granted them. No background share and no
// aging within the test: only job priority decides that order.
let stack: Stack;
let script: ModelScript;

beforeAll(async () => {
  stack = await startStack({
    env: {
      LLM_POOLS: JSON.stringify([{ name: 'one', capacity: 1 }]),
      LLM_BACKGROUND_MIN_SHARE: '0',
      LLM_PRIORITY_AGING_MS: '600000',
    },
  });
  script = new ModelScript(stack.llm);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('job priority under a saturated LLM cap', () => {
  it('a retry of a running task overtakes new tasks queued before it', async () => {
    const retried = 'priority: the running task whose first call fails';
    const fresh = [1, 2, 3, 4].map((i) => `priority: new task ${i}`);
    // The first call fails after 1 s (retryable 500, redelivered within about a second); each new
    // task's call holds the only permit for 3 s, so the retry waits while all four are queued.
    script.on(retried, [{ status: 500, message: 'provider hiccup', delayMs: 1000 }], { then: { content: `Done: ${retried}` } });
    for (const goal of fresh) script.on(goal, [{ content: `Done: ${goal}`, delayMs: 3000 }]);
    // Generous: five tasks one call at a time through one permit, on a loaded 2-core machine.
    const first = watchTask(stack.bus, await submit(stack.bus, { user_id: 'prio-alice', goal: retried }), 90_000);
    while (script.requests(retried).length === 0) await new Promise((r) => setTimeout(r, 20));
    const others = [];
    for (const goal of fresh) others.push(watchTask(stack.bus, await submit(stack.bus, { user_id: `prio-${goal.slice(-1)}`, goal }), 90_000));
    const ends = await Promise.all([first.done, ...others.map((w) => w.done)]);
    for (const events of ends) expect(outcomeOf(events).kind).toBe('completed');

    console.log(stack.llm.requests.map((r) => `${r.receivedAt - stack.llm.requests[0]!.receivedAt} ${goalOf(r.body)}`).join('\n'));
    const order = stack.llm.requests.map((r) => goalOf(r.body)).filter((g) => g === retried || fresh.includes(g!));
    // The failed call, the new task granted the permit it freed, then the retry (priority 2)
    // ahead of the three new tasks (priority 1) that had been waiting longer.
    expect(order[0]).toBe(retried);
    expect(order.indexOf(retried, 1)).toBe(2);
  }, 120_000);
});
