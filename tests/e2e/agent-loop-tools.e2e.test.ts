import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildService } from '@hermes/testkit';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { callTools, ModelScript, offeredTools, toolMessages } from './model-script.js';
import { outcomeOf, runTask, steps } from './tasks.js';
import { auditRecords, hermesCli, Ledger, startToolProvider } from './tool-fixtures.js';

// The agent loop through real processes: runtime ⇄ scripted model, runtime → toolbus → built-in
// tools and a remote provider process, on the shared stack.
let stack: SharedStack;
let model: ModelScript;
let ledger: Ledger;
let provider: ChildService;

beforeAll(async () => {
  stack = await sharedStack();
  model = new ModelScript(stack.llm);
  ledger = new Ledger();
  provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger });
}, 90_000);

afterAll(async () => {
  await provider?.stop(3000);
  await stack?.stop();
  ledger?.remove();
});

describe('agent loop with tools, end to end', () => {
  it('runs a multi-step loop with parallel calls of a built-in and a remote tool, feeding results back by tool_call_id', async () => {
    const goal = 'plan the invoice follow-up';
    model.on(goal, [
      callTools(
        { id: 'call_date', name: 'date_add', arguments: { date: '2025-01-31', months: 1 } },
        { id: 'call_lookup', name: 'lookup', arguments: { id: 'INV-7' } },
      ),
      callTools({ id: 'call_ledger', name: 'ledger_append', arguments: { entry: 'follow up INV-7 on 2025-02-28' } }),
      { content: 'Follow-up booked for 2025-02-28.' },
    ]);
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal });

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'Follow-up booked for 2025-02-28.' });
    const stepIds = (kind: string) =>
      steps(events, kind).map(
        (s) =>
          `${s.step}:${String((s.detail as { call_id?: string } | undefined)?.call_id ?? '')
            .split(/[.:]/)
            .at(-1)}`,
      );
    expect(steps(events, 'llm_call').map((s) => s.step)).toEqual([1, 2, 3]);
    expect(stepIds('tool_call').sort()).toEqual(['1:0', '1:1', '2:0']);
    expect(stepIds('tool_result').sort()).toEqual(['1:0', '1:1', '2:0']);
    const results = steps(events, 'tool_result').map((s) => s.detail as { tool: string; status: string });
    expect(results.map((r) => [r.tool, r.status]).sort()).toEqual([
      ['date_add', 'ok'],
      ['ledger_append', 'ok'],
      ['lookup', 'ok'],
    ]);

    // The model offered every tool, then read each result under the id of the call that asked for it, in call order.
    const asked = model.requests(goal);
    expect(asked).toHaveLength(3);
    expect(offeredTools(asked[0]!.body)).toEqual(expect.arrayContaining(['date_add', 'time_now', 'lookup', 'ledger_append']));
    const afterFirst = toolMessages(asked[1]!.body);
    expect(afterFirst.map((m) => m.tool_call_id)).toEqual(['call_date', 'call_lookup']);
    expect(afterFirst[0]!.content).toMatchObject({ ok: true, result: { date: '2025-02-28' } });
    expect(afterFirst[1]!.content).toMatchObject({ ok: true, result: { id: 'INV-7', name: 'record INV-7' } });
    const afterSecond = toolMessages(asked[2]!.body);
    expect(afterSecond.map((m) => m.tool_call_id)).toEqual(['call_date', 'call_lookup', 'call_ledger']);
    expect(afterSecond[2]!.content).toMatchObject({ ok: true, result: { written: 'follow up INV-7 on 2025-02-28', key: `${taskId}:main:2:0` } });
    // The assistant turn with both calls precedes their results.
    const roles = asked[2]!.body.messages!.map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool']);
    expect(ledger.countByKey(taskId)).toEqual({ [`${taskId}:main:2:0`]: 1 });
  });

  it('repairs malformed tool arguments (trailing comma, single quotes) and runs the tool', async () => {
    const goal = 'add a month with sloppy JSON';
    model.on(goal, [callTools({ id: 'c1', name: 'date_add', arguments: "{'date': '2024-01-31', 'months': 1,}" }), { content: 'It is 2024-02-29.' }]);
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal });

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'It is 2024-02-29.' });
    const [second] = model.requests(goal).slice(1);
    expect(toolMessages(second!.body)).toEqual([{ tool_call_id: 'c1', content: { ok: true, result: { date: '2024-02-29', weekday: 'Thursday' } } }]);
  });

  it('invalid arguments reach the model as a structured error naming the field, and corrected arguments succeed', async () => {
    const goal = 'look up a record after a wrong first try';
    model.on(goal, [
      callTools({ id: 'bad', name: 'lookup', arguments: { key: 'INV-9' } }),
      callTools({ id: 'good', name: 'lookup', arguments: { id: 'INV-9' } }),
      { content: 'INV-9 is active.' },
    ]);
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal });

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'INV-9 is active.' });
    const asked = model.requests(goal);
    const [error] = toolMessages(asked[1]!.body);
    expect(error!.tool_call_id).toBe('bad');
    expect(error!.content.ok).toBe(false);
    expect(error!.content.error).toMatchObject({ code: 'invalid_arguments', retryable: false });
    expect(error!.content.error!.message).toMatch(/\/id/);
    expect(error!.content.error!.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/id', message: 'is required' }),
        expect.objectContaining({ path: '/key', message: expect.stringMatching(/not an allowed property/) }),
      ]),
    );
    expect(error!.content.hint).toMatch(/Fix the arguments/);
    const [, fixed] = toolMessages(asked[2]!.body);
    expect(fixed).toEqual({ tool_call_id: 'good', content: { ok: true, result: { id: 'INV-9', name: 'record INV-9', status: 'active' } } });
    expect(steps(events, 'tool_result').map((s) => (s.detail as { status: string; error?: string }).error ?? 'ok')).toEqual(['invalid_arguments', 'ok']);
  });

  it('a tool that outlives its timeout_ms reaches the model as tool_timeout, and the task still completes', async () => {
    const goal = 'try the slow operation';
    model.on(goal, [callTools({ id: 'slow', name: 'slow_op', arguments: { seconds: 3 } }), { content: 'The slow operation timed out; nothing was done.' }]);
    const started = Date.now();
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal });

    expect(outcomeOf(events).kind).toBe('completed');
    expect(Date.now() - started).toBeLessThan(2900); // the loop did not wait for the 3 s handler
    const [timedOut] = toolMessages(model.requests(goal)[1]!.body);
    expect(timedOut!.content).toMatchObject({ ok: false, error: { code: 'tool_timeout', retryable: true } });
    expect(timedOut!.content.error!.message).toMatch(/500 ms|timeout/);
  });

  it('stops a model that repeats the same call with loop_detected', async () => {
    const goal = 'keep looking up the same record';
    model.on(goal, [], { then: (_req, n) => callTools({ id: `again_${n}`, name: 'lookup', arguments: { id: 'INV-1' } }) });
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal });

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'loop_detected' });
    // Two identical calls ran; the third identical request stopped the loop before it ran.
    expect(model.requests(goal)).toHaveLength(3);
    expect(steps(events, 'tool_result')).toHaveLength(2);
    const records = await auditRecords(stack.bus, taskId, 2);
    expect(records.map((r) => r.tool)).toEqual(['lookup', 'lookup']);
  });

  it('fails with max_steps_exceeded when the model never answers within budget.max_steps', async () => {
    const goal = 'count dates forever';
    model.on(goal, [], { then: (_req, n) => callTools({ id: `step_${n}`, name: 'date_add', arguments: { date: '2025-01-01', days: n } }) });
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal, budget: { max_steps: 2 } });

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'max_steps_exceeded' });
    expect(model.requests(goal)).toHaveLength(2);
    expect(steps(events, 'llm_call').map((s) => s.step)).toEqual([1, 2]);
  });

  it('hermes audit <task> prints one line per tool call of a finished task', async () => {
    const goal = 'audit me';
    model.on(goal, [
      callTools({ name: 'lookup', arguments: { id: 'INV-42' } }, { name: 'date_add', arguments: { date: '2025-03-01', days: 1 } }),
      callTools({ name: 'ledger_append', arguments: { entry: 'audited' } }),
      { content: 'Audited.' },
    ]);
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(events).kind).toBe('completed');
    const records = await auditRecords(stack.bus, taskId, 3);

    const { stdout } = await hermesCli(stack.natsUrl, ['audit', taskId]);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+TOOL\s+OUTCOME\s+DURATION\s+FLAGS\s+ERROR$/);
    expect(lines).toHaveLength(1 + records.length);
    expect(records).toHaveLength(3);
    const rows = lines.slice(1).map((l) => l.split(/\s+/));
    expect(
      rows
        .map((r) => r[1])
        .slice(0, 2)
        .sort(),
    ).toEqual(['date_add', 'lookup']);
    expect(rows.map((r) => [r[1], r[2]])[2]).toEqual(['ledger_append', 'ok']);
    expect(rows.every((r) => r[2] === 'ok' && /^\d+ms$/.test(r[3]!) && r[5] === '-')).toBe(true);

    const json = await hermesCli(stack.natsUrl, ['audit', taskId, '--json']);
    const parsed = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { idempotency_key: string; user_id: string; provider: string });
    expect(parsed.map((r) => r.idempotency_key).sort()).toEqual([`${taskId}:main:1:0`, `${taskId}:main:1:1`, `${taskId}:main:2:0`]);
    expect(parsed.every((r) => r.user_id === 'alice')).toBe(true);
  });
});
