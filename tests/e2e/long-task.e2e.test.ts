import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, taskEventData } from '@hermes/contracts';
import { submitTask } from '@hermes/bus';
import { eventually, type ChatRequestBody } from '@hermes/testkit';
import { runtimeHolding, startStack, type Stack } from './stack.js';
import { collectTaskEvents, kinds } from './events.js';
import { Ledger, startToolProvider } from './tool-fixtures.js';
import { goalOf } from './model-script.js';
import type { ChildService } from '@hermes/testkit';

// A task far longer than a checkpoint of the whole conversation could hold: 220 steps, each
// calling a side-effecting tool that returns ~20 KB, so the conversation grows to ~4.4 MB,
// four times max_payload. The runtime is killed with SIGKILL while the model answers step 181.
const STEPS = 220;
const KILL_AT = 181;
const PAD = 20_000;

let stack: Stack;
let ledger: Ledger;
let provider: ChildService;

beforeAll(async () => {
  stack = await startStack({
    runtimeAckWaitMs: 2000,
    // The tool's ~20 KB result reaches the model whole (the default cut is 16,000 characters).
    serviceEnv: { toolbus: { TOOL_RESULT_MAX_CHARS: '30000' } },
  });
  ledger = new Ledger();
  provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger, tools: ['ledger_append'] });
}, 120_000);

afterAll(async () => {
  await provider?.stop(3000);
  ledger?.remove();
  await stack?.stop();
});

/** Steps the loop has completed when it sends this request: the assistant turns in it. */
const completedSteps = (body: ChatRequestBody) => (body.messages ?? []).filter((m) => m.role === 'assistant').length;

describe('a long task', () => {
  it(`${STEPS} steps of ~20 KB side-effecting tool results complete across a SIGKILL at step ${KILL_AT}, no LLM step asked twice, no tool run twice`, async () => {
    const goal = 'append two hundred and twenty large ledger entries';
    // How often the model was asked for each step, counted here because the requests are not kept:
    // 220 bodies averaging 2 MB would hold ~450 MB in the test process.
    const asked = new Map<number, number>();
    let largestBody = 0;
    let killed = false;
    stack.llm.setResponder(({ body }) => {
      if (goalOf(body) !== goal) return { content: 'unscripted' };
      const done = completedSteps(body);
      asked.set(done + 1, (asked.get(done + 1) ?? 0) + 1);
      largestBody = Math.max(largestBody, JSON.stringify(body.messages).length);
      stack.llm.resetStats();
      if (done >= STEPS) return { content: `appended ${done} entries` };
      const call = { id: `call_${done + 1}`, name: 'ledger_append', arguments: { entry: `entry ${done + 1}`, pad_bytes: PAD } };
      // The step the runtime is killed in is answered late, so the kill lands while the model works on it.
      return { toolCalls: [call], ...(done + 1 === KILL_AT && !killed ? { delayMs: 5_000 } : {}) };
    });
    const { taskId } = await submitTask(
      stack.bus,
      { user_id: 'erin', goal, budget: { max_steps: STEPS + 10 } },
      { team: DEFAULT_TEAM, source: '/e2e/long-task', id: 'long-1' },
    );

    // Generous: 180 steps of multi-megabyte requests on a loaded 2-core machine.
    await eventually(() => (asked.get(KILL_AT) ?? 0) > 0, 240_000, `the model to be asked for step ${KILL_AT}`);
    const holder = await runtimeHolding(stack, taskId);
    expect(holder, 'a runtime logged that it started the job').toBeDefined();
    await holder!.kill();
    killed = true;
    await stack.startReplica('runtime', 'runtime-2');

    const events = await collectTaskEvents(stack.bus, taskId, 240_000);
    expect(kinds(events).at(-1)).toBe('completed');
    expect(taskEventData(events.at(-1)!, 'completed')?.result.output).toBe(`appended ${STEPS} entries`);
    expect(events.flatMap((e) => taskEventData(e, 'started')?.attempt ?? [])).toEqual([1, 2]);

    // Every completed LLM step was asked once; only the one the kill cut off was asked again.
    const again = [...asked].filter(([, n]) => n > 1).map(([step]) => step);
    expect(again).toEqual([KILL_AT]);
    expect(asked.size).toBe(STEPS + 1);
    // Every tool step ran once, under its own key (the one resumed at step 180 was replayed, not run).
    const byKey = ledger.countByKey(taskId);
    expect(Object.keys(byKey)).toHaveLength(STEPS);
    expect(Object.values(byKey).every((n) => n === 1)).toBe(true);
    expect(largestBody).toBeGreaterThan(4 * 1024 * 1024);

    // Every checkpoint record of the job stays far below max_payload, whatever the conversation's size.
    const kv = await stack.bus.kv('checkpoints');
    // This stack ran this one task: every key in the bucket is one of its job's records.
    const sizes = new Map<string, number>();
    for await (const key of await kv.keys('job.>')) sizes.set(key, (await kv.get(key))!.length);
    const heads = [...sizes.keys()].filter((k) => k.split('.').length === 2);
    expect(heads).toHaveLength(1);
    expect(sizes.get(heads[0]!)).toBeLessThan(1024);
    expect(sizes.size).toBeGreaterThan(STEPS);
    expect(Math.max(...sizes.values())).toBeLessThan(64 * 1024);
    expect(stack.bus.maxPayload).toBeGreaterThan(Math.max(...sizes.values()) * 10);
  }, 600_000);
});
