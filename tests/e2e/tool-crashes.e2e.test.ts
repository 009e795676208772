import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, taskEventData } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { eventually, type ChildService } from '@hermes/testkit';
import { replicasOf, runtimeHolding, startStack, type Stack } from './stack.js';
import { callTools, ModelScript, toolMessages } from './model-script.js';
import { outcomeOf, steps, submit, watchTask } from './tasks.js';
import { auditRecords, Ledger, startToolProvider } from './tool-fixtures.js';

// Processes die mid-task; every tool side effect still happens exactly once per idempotency key.
let stack: Stack;
let model: ModelScript;
let ledger: Ledger;
let provider: ChildService;

beforeAll(async () => {
  stack = await startStack({
    runtimeReplicas: 2,
    // A job whose runtime died is redelivered 2 s later; a toolbus that died loses its call's lease after 1 s.
    runtimeAckWaitMs: 2000,
    serviceEnv: {
      // A call without a reply is asked again after 1 s, under its key.
      runtime: { RUNTIME_MAX_ATTEMPTS: '10', TOOL_CALL_TIMEOUT_MS: '3000', TOOL_REPLY_WAIT_MS: '1000' },
      toolbus: { TOOL_CALL_LEASE_MS: '1000' },
    },
  });
  model = new ModelScript(stack.llm);
  ledger = new Ledger();
  provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger });
}, 90_000);

afterAll(async () => {
  await provider?.stop(3000);
  await stack?.stop();
  ledger?.remove();
});

const attempts = (events: Parameters<typeof steps>[0]) => events.flatMap((e) => taskEventData(e, 'started')?.attempt ?? []);

/** SIGKILLs the runtime replica holding the task's job and starts a replacement, so two replicas keep serving. */
async function killHolder(taskId: string, replacement: string): Promise<ChildService> {
  const holder = await runtimeHolding(stack, taskId);
  expect(holder, 'a runtime logged that it started the job').toBeDefined();
  await holder!.kill();
  // Meanwhile the job waits out its ack_wait; the replacement may or may not be the one that takes it.
  await stack.startReplica('runtime', replacement);
  return holder!;
}

describe('crashes around tool calls', () => {
  it('a runtime killed after a side-effecting tool ran: the job resumes on another replica from its checkpoint and the side effect happens once', async () => {
    const goal = 'append to the ledger and survive a runtime crash';
    model.on(goal, [
      callTools({ id: 'led', name: 'ledger_append', arguments: { entry: 'crash-a' } }),
      // The holder dies while it waits for this answer, after the tool result was checkpointed.
      { content: 'never delivered', delayMs: 15_000 },
      { content: 'Ledger updated.' },
    ]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId, 30_000);

    await eventually(() => model.requests(goal).length === 2, 15_000, 'the second LLM call');
    expect(ledger.countByKey(taskId)).toEqual({ [`${taskId}:main:1:0`]: 1 });
    await killHolder(taskId, 'runtime-3');
    const events = await watch.done;

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'Ledger updated.' });
    // The kill's redelivery is the second; a holder starved past the 2 s ack wait on a loaded machine
    // can see one more (fenced: it repeats no model call and no tool run, asserted below).
    expect(attempts(events).slice(0, 2)).toEqual([1, 2]);
    // Asked once for step 1 and twice for step 2 (the lost call and its retry), never for step 1 again.
    const asked = model.requests(goal);
    expect(asked).toHaveLength(3);
    expect(asked[2]!.body.messages).toEqual(asked[1]!.body.messages);
    expect(toolMessages(asked[2]!.body)).toEqual([{ tool_call_id: 'led', content: { ok: true, result: { written: 'crash-a', key: `${taskId}:main:1:0` } } }]);
    expect(ledger.countByKey(taskId)).toEqual({ [`${taskId}:main:1:0`]: 1 });
    const view = await request(stack.bus, contracts.taskGet, { task_id: taskId });
    expect(view).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('a runtime killed while its tool call runs: the redelivered job sends the same key, gets the recorded result, and the tool ran once', async () => {
    const goal = 'append slowly to the ledger and survive a runtime crash';
    const gate = ledger.gate('runtime-crash');
    model.on(goal, [
      callTools({ id: 'slow-led', name: 'ledger_append', arguments: { entry: 'crash-b', hold_until_file: gate.path } }),
      { content: 'Ledger updated slowly.' },
    ]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId, 30_000);

    // Killed while the provider holds the call; the call then finishes long before the job comes back (after ack_wait, ≥ 1.3 s).
    await provider.waitForLog(new RegExp(`ledger_append started ${taskId}`), 15_000);
    await killHolder(taskId, 'runtime-4');
    gate.open();
    const events = await watch.done;

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'Ledger updated slowly.' });
    // The kill's redelivery is the second; a holder starved past the 2 s ack wait on a loaded machine
    // can see one more (fenced: it repeats no model call and no tool run, asserted below).
    expect(attempts(events).slice(0, 2)).toEqual([1, 2]);
    expect(model.requests(goal)).toHaveLength(2);
    expect(ledger.countByKey(taskId)).toEqual({ [`${taskId}:main:1:0`]: 1 });
    // The result the model read is the toolbus's record of the first run, replayed.
    const [result] = steps(events, 'tool_result');
    expect(result!.detail).toMatchObject({ tool: 'ledger_append', status: 'ok', replayed: true });
    expect(toolMessages(model.requests(goal)[1]!.body)[0]!.content).toMatchObject({ ok: true, result: { written: 'crash-b' } });
  });

  it('a toolbus killed while the provider runs the call: the call is asked again, a new toolbus takes it over, the provider does not run it twice, and no attempt is used', async () => {
    const goal = 'append to the ledger and survive a toolbus crash';
    const gate = ledger.gate('toolbus-crash');
    model.on(goal, [
      callTools({ id: 'tb', name: 'ledger_append', arguments: { entry: 'crash-c', hold_until_file: gate.path } }),
      { content: 'Ledger updated despite the toolbus.' },
    ]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId, 40_000);

    // The toolbus dies while the provider holds the call; the provider then finishes it, answering nobody.
    await provider.waitForLog(new RegExp(`ledger_append started ${taskId}`), 15_000);
    const [toolbus] = await replicasOf(stack, 'toolbus');
    await toolbus!.kill();
    gate.open();
    // The runtime asks again (TOOL_REPLY_WAIT_MS), waits while no toolbus listens, and reaches this replica.
    await stack.startReplica('toolbus', 'toolbus-2');
    const events = await watch.done;

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'Ledger updated despite the toolbus.' });
    expect(ledger.countByKey(taskId)).toEqual({ [`${taskId}:main:1:0`]: 1 });
    // The same delivery waited the toolbus out: before, the call timed out and the job was retried.
    expect(attempts(events)).toEqual([1]);
    // Step 1 was asked once.
    expect(model.requests(goal)).toHaveLength(2);
    // The dead toolbus never finished the call; the new one took it over under the same key.
    const [record] = await auditRecords(stack.bus, taskId, 1);
    expect(record).toMatchObject({
      tool: 'ledger_append',
      outcome: 'ok',
      idempotency_key: `${taskId}:main:1:0`,
      result_summary: expect.stringMatching(/^taken over from toolbus-/),
    });
    expect(toolMessages(model.requests(goal)[1]!.body)).toEqual([
      { tool_call_id: 'tb', content: { ok: true, result: { written: 'crash-c', key: `${taskId}:main:1:0` } } },
    ]);
  });
});
