import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { callTools, type ModelScript, toolMessages } from './model-script.js';
import { outcomeOf, runTask } from './tasks.js';
import { auditRecords, type ToolStack, withToolProvider } from './tool-fixtures.js';

// A provider's declared transforms and rules, run by the ToolBus (repair → transform → validate →
// rules) between the scripted model and a real provider process built on @hermes/tool-sdk.
let stack: SharedStack;
let model: ModelScript;
let tools: ToolStack;

beforeAll(async () => {
  tools = await withToolProvider(await sharedStack(), { name: 'ops-rules', tools: ['ops_query'] });
  ({ stack, model } = tools);
}, 90_000);

afterAll(() => tools?.stop());

describe('tool transforms, rules and time normalisation', () => {
  it('transforms what the model sent (alias, unit, trim, case, offset-less time) and tells the model and the audit what changed', async () => {
    const goal = 'query eu operations with sloppy arguments';
    model.on(goal, [
      callTools({ id: 'q1', name: 'ops_query', arguments: { region: '  EU ', since: '2026-12-01T08:00', window: '90 min' } }),
      { content: 'Queried.' },
    ]);
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(events).kind).toBe('completed');

    const [reply] = toolMessages(model.requests(goal)[1]!.body);
    // What the provider's handler received, echoed back: the transformed arguments.
    expect(reply!.content).toMatchObject({ ok: true, result: { received: { region: 'eu', since: '2026-12-01T08:00:00Z', window_s: 5400 } } });
    const changes = reply!.content.adjusted_arguments!.map((a) => [a.path, a.transform, a.to]);
    expect(changes).toEqual([
      ['/window_s', 'alias', '/window_s'],
      ['/window_s', 'unit', '5400'],
      ['/region', 'trim', '"EU"'],
      ['/region', 'case', '"eu"'],
      ['/since', 'date_time', '"2026-12-01T08:00:00Z"'],
    ]);
    const [audit] = await auditRecords(stack.bus, taskId);
    expect(audit).toMatchObject({ tool: 'ops_query', outcome: 'ok' });
    expect(audit!.adjustments).toEqual(reply!.content.adjusted_arguments);
  });

  it('refuses arguments that break a rule with a correction naming the rule, and runs the corrected call', async () => {
    const goal = 'query us operations from before go-live';
    model.on(goal, [
      callTools({ id: 'r1', name: 'ops_query', arguments: { region: 'us', since: '2023-06-01T00:00:00Z', until: '2022-01-01T00:00:00+02:00', window_s: 60 } }),
      callTools({ id: 'r2', name: 'ops_query', arguments: { region: 'us', since: '2024-01-01T00:00:00Z', window_s: 60 } }),
      { content: 'Queried from go-live on.' },
    ]);
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(events).kind).toBe('completed');

    const [refused, ran] = toolMessages(model.requests(goal)[2]!.body);
    expect(refused!.content).toMatchObject({ ok: false, error: { code: 'invalid_arguments', retryable: false } });
    expect(refused!.content.error!.issues).toEqual([
      expect.objectContaining({ path: '/since', rule: 'not_before_go_live', message: expect.stringContaining('before the system went live') }),
      expect.objectContaining({ path: '/until', rule: 'until_after_since', got: '"2022-01-01T00:00:00+02:00"' }),
    ]);
    expect(ran!.content).toMatchObject({ ok: true, result: { received: { since: '2024-01-01T00:00:00Z' } } });
    const audit = await auditRecords(stack.bus, taskId, 2);
    expect(audit.map((a) => [a.outcome, a.error_code, a.broken_rules])).toEqual([
      ['error', 'invalid_arguments', ['not_before_go_live', 'until_after_since']],
      ['ok', undefined, undefined],
    ]);
  });

  it('refuses a natural-language time with the hint to resolve it with time_now and date_add first', async () => {
    const goal = 'query eu operations since tomorrow';
    model.on(goal, [
      callTools({ id: 'n1', name: 'ops_query', arguments: { region: 'eu', since: 'tomorrow 9am', window_s: 60 } }),
      { content: 'I need a real time.' },
    ]);
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(events).kind).toBe('completed');

    const [refused] = toolMessages(model.requests(goal)[1]!.body);
    expect(refused!.content).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    const [issue] = refused!.content.error!.issues!;
    expect(issue).toMatchObject({ path: '/since', got: '"tomorrow 9am"' });
    expect(issue!.message).toMatch(/time_now/);
    expect(issue!.message).toMatch(/date_add/);
    const [audit] = await auditRecords(stack.bus, taskId);
    expect(audit).toMatchObject({ outcome: 'error', error_code: 'invalid_arguments' });
  });
});
