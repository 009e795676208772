import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, isTerminalStatus, taskEventData, type TaskEvent, type TaskView } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { eventually } from '@hermes/testkit';
import { callTools, ModelScript, toolMessages } from './model-script.js';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

/**
 * A dependency restarting under a running task costs the task time, not an attempt: the runtime
 * waits the outage out (HERMES_OUTAGE_BUDGET_MS) and reports what it waits for as `waiting` steps.
 * Before, a toolbus or memory away for a couple of seconds failed tasks with `no_responders`.
 */
let stack: Stack;
let script: ModelScript;

beforeAll(async () => {
  // One attempt per job: a retryable failure would fail the task outright (and each test checks
  // the job was delivered once: waiting the outage out holds the delivery instead of handing it back).
  stack = await startStack({ env: { RUNTIME_MAX_ATTEMPTS: '1' } });
  script = new ModelScript(stack.llm);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** The delivery numbers of the job's `started` events. */
const deliveries = (events: TaskEvent[]) => events.flatMap((e) => taskEventData(e, 'started')?.attempt ?? []);

const waits = (events: TaskEvent[]) =>
  events.flatMap((e) => {
    const step = taskEventData(e, 'step');
    return step?.kind === 'waiting' ? [step.detail as { waiting_for: string; code: string }] : [];
  });

/** SIGKILLs the running replica of a service. */
async function kill(kind: 'toolbus' | 'memory'): Promise<void> {
  const [name, svc] = [...stack.services].find(([n]) => n === kind || n.startsWith(`${kind}-`))!;
  await svc.kill();
  stack.services.delete(name);
}

/** Reads tasks.get every 50 ms until the task ends: `waiting_for` of each running view, and the final view. */
async function followView(taskId: string): Promise<{ running: (string | undefined)[]; final: TaskView }> {
  const running: (string | undefined)[] = [];
  for (;;) {
    const view = await request(stack.bus, contracts.taskGet, { task_id: taskId }).catch(() => undefined);
    if (view && isTerminalStatus(view.status)) return { running, final: view };
    if (view) running.push(view.waiting_for);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('dependency outages under a running task', () => {
  it('the only toolbus killed before a tool call and back once the call waits for it: the task completes', async () => {
    const goal = 'outage: call echo while the toolbus restarts';
    let restarting: Promise<void> | undefined;
    let taskId = '';
    script.on(goal, [
      () => {
        // The toolbus goes away as the model answers with the tool call, and comes back only once
        // the task says it waits for it (a fixed 2 s was sometimes over before a starved runtime
        // even sent the call, on a loaded 2-core machine).
        restarting = (async () => {
          await kill('toolbus');
          await eventually(
            async () => (await request(stack.bus, contracts.taskGet, { task_id: taskId }).catch(() => undefined))?.waiting_for === 'toolbus',
            60_000,
            'the task to wait for the toolbus',
          );
          await stack.startReplica('toolbus', 'toolbus-2');
        })();
        return callTools({ name: 'echo', arguments: { text: 'still here' } });
      },
      // Slow, so the task is seen running after its wait ended.
      (req) => ({ content: `echoed: ${JSON.stringify(toolMessages(req.body)[0]?.content.result)}`, delayMs: 1500 }),
    ]);
    taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const views = followView(taskId);
    // Generous: a new toolbus process starts on a loaded 2-core machine.
    const events = await watchTask(stack.bus, taskId, 90_000).done;
    await restarting;

    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: 'echoed: {"result":"still here"}' });
    expect(deliveries(events)).toEqual([1]);
    expect(waits(events).map((w) => [w.waiting_for, w.code])).toContainEqual(['toolbus', 'no_responders']);
    // tasks.get said what the task waited for while it waited, and nothing once the wait was over.
    const { running, final } = await views;
    const waited = running.indexOf('toolbus');
    expect(waited).toBeGreaterThanOrEqual(0);
    expect(running.slice(waited)).toContain(undefined);
    expect(final.waiting_for).toBeUndefined();
  });

  it('the memory service killed before a task and back 3 s later: the task waits for its session and completes', async () => {
    const goal = 'outage: answer while memory restarts';
    script.on(goal, [{ content: 'answered after the memory outage' }]);
    await kill('memory');
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId, 90_000);
    await watch.next((e) => taskEventData(e, 'step')?.kind === 'waiting', 30_000);
    await new Promise((r) => setTimeout(r, 3000));
    await stack.startReplica('memory', 'memory-2');
    const events = await watch.done;

    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: 'answered after the memory outage' });
    expect(deliveries(events)).toEqual([1]);
    expect(waits(events).map((w) => w.waiting_for)).toContain('memory');
  });
});
