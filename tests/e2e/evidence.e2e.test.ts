import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEventData, type TaskEvent } from '@hermes/contracts';
import type { ChildService } from '@hermes/testkit';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { Ledger, startToolProvider } from './tool-fixtures.js';
import { callTools, ModelScript } from './model-script.js';
import { outcomeOf, runTask, steps } from './tasks.js';

// The evidence gate through real processes: runtime ⇄ scripted model, runtime → toolbus → the
// built-in date_add (its result is known: 2025-01-31 plus a month is 2025-02-28), and a remote
// provider's account_balance, a tool declared with require_evidence.
let stack: SharedStack;
let model: ModelScript;
let provider: ChildService;
const ledger = new Ledger();

beforeAll(async () => {
  stack = await sharedStack();
  model = new ModelScript(stack.llm);
  provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger, name: 'ev-tools', tools: ['account_balance'] });
}, 90_000);

afterAll(async () => {
  await provider?.stop(3000);
  await stack?.stop();
  ledger.remove();
});

const addMonth = (id: string) => callTools({ id, name: 'date_add', arguments: { date: '2025-01-31', months: 1 } });

function failure(events: TaskEvent[]) {
  const failed = taskEventData(events.at(-1)!, 'failed');
  return failed?.error;
}

/** The last user message of a request: what the gate told the model. */
function lastUserMessage(body: { messages?: { role: string; content?: unknown }[] }): string {
  const user = (body.messages ?? []).filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : '';
}

describe('evidence gate (require_evidence)', () => {
  it('an answer citing nothing is sent back once, then the task ends unsupported_answer', async () => {
    const goal = 'evidence: due date without citation';
    model.on(goal, [addMonth('call_e1'), { content: 'The follow-up is due on 2025-02-28.' }, { content: 'It is due 2025-02-28, trust me.' }]);
    const { events } = await runTask(stack.bus, { user_id: 'ev-alice', goal, require_evidence: true });

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'unsupported_answer' });
    const error = failure(events)!;
    expect(error.retryable).toBe(false);
    expect(error.details?.problems).toEqual([{ kind: 'no_citation' }]);
    // Asked exactly once more, and told why and how to cite.
    const asked = model.requests(goal);
    expect(asked).toHaveLength(3);
    expect(lastUserMessage(asked[2]!.body)).toMatch(/cites no tool result/);
    expect(lastUserMessage(asked[2]!.body)).toContain('[evidence <call_id>:');
    expect(steps(events, 'evidence_refused')).toHaveLength(1);
  });

  it('a quote that is not in the cited result is refused (fabricated evidence), and so is an unknown call id', async () => {
    const goal = 'evidence: fabricated quote';
    model.on(goal, [
      addMonth('call_f1'),
      { content: 'Due on 2025-03-31 [evidence call_f1: "2025-03-31"].' },
      { content: 'Due on 2025-03-31 [evidence call_zz: "2025-02-28"].' },
    ]);
    const { events } = await runTask(stack.bus, { user_id: 'ev-alice', goal, require_evidence: true });

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'unsupported_answer' });
    expect(failure(events)!.details?.problems).toEqual([{ kind: 'unknown_call', call_id: 'call_zz' }]);
    const asked = model.requests(goal);
    expect(asked).toHaveLength(3);
    expect(lastUserMessage(asked[2]!.body)).toContain('"2025-03-31" does not appear in the result of call_f1');
  });

  it('an answer quoting its tool result passes, at once or on its second chance', async () => {
    const direct = 'evidence: real quote';
    model.on(direct, [addMonth('call_r1'), { content: 'Due on 2025-02-28 [evidence call_r1: "2025-02-28"].' }]);
    const corrected = 'evidence: corrected quote';
    model.on(corrected, [
      addMonth('call_c1'),
      { content: 'Due at the end of March [evidence call_c1: "2025-03-31"].' },
      { content: 'Due on 2025-02-28 [evidence call_c1: "2025-02-28"].' },
    ]);
    const [first, second] = await Promise.all([
      runTask(stack.bus, { user_id: 'ev-alice', goal: direct, require_evidence: true }),
      runTask(stack.bus, { user_id: 'ev-alice', goal: corrected, require_evidence: true }),
    ]);

    expect(outcomeOf(first.events)).toEqual({ kind: 'completed', output: 'Due on 2025-02-28 [evidence call_r1: "2025-02-28"].' });
    expect(model.requests(direct)).toHaveLength(2);
    expect(steps(first.events, 'evidence_refused')).toHaveLength(0);
    expect(outcomeOf(second.events)).toEqual({ kind: 'completed', output: 'Due on 2025-02-28 [evidence call_c1: "2025-02-28"].' });
    expect(steps(second.events, 'evidence_refused')).toHaveLength(1);
  });

  it('without require_evidence an uncited answer is the result', async () => {
    const goal = 'evidence: not required';
    model.on(goal, [addMonth('call_n1'), { content: 'Due on 2025-02-28.' }]);
    const { events } = await runTask(stack.bus, { user_id: 'ev-alice', goal });
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'Due on 2025-02-28.' });
  });
});

describe('evidence gate, asked for by a tool (require_evidence in its ToolSpec)', () => {
  const balance = (id: string) => callTools({ id, name: 'account_balance', arguments: { account: 'acc-7' } });

  it('a task that called the tool must cite it: an uncited answer is sent back once, then unsupported_answer', async () => {
    const goal = 'evidence tool: balance without citation';
    model.on(goal, [balance('call_b1'), { content: 'The balance is 42.17 EUR.' }, { content: 'Still 42.17 EUR.' }]);
    // The task itself does not ask for evidence: the tool's declaration does.
    const { events } = await runTask(stack.bus, { user_id: 'ev-bob', goal });

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'unsupported_answer' });
    expect(failure(events)!.details?.problems).toEqual([{ kind: 'no_citation' }]);
    const asked = model.requests(goal);
    expect(asked).toHaveLength(3);
    expect(lastUserMessage(asked[2]!.body)).toMatch(/cites no tool result/);
    expect(steps(events, 'evidence_refused')).toHaveLength(1);
  });

  it("an answer quoting the tool's result passes, and a fabricated quote does not", async () => {
    const cited = 'evidence tool: balance cited';
    model.on(cited, [balance('call_b2'), { content: 'The balance is 4217 cents [evidence call_b2: "4217"].' }]);
    const fabricated = 'evidence tool: balance fabricated';
    model.on(fabricated, [
      balance('call_b3'),
      { content: 'The balance is 9999 cents [evidence call_b3: "9999"].' },
      { content: 'Really 9999 [evidence call_b3: "9999"].' },
    ]);
    const [good, bad] = await Promise.all([
      runTask(stack.bus, { user_id: 'ev-bob', goal: cited }),
      runTask(stack.bus, { user_id: 'ev-bob', goal: fabricated }),
    ]);

    expect(outcomeOf(good.events)).toEqual({ kind: 'completed', output: 'The balance is 4217 cents [evidence call_b2: "4217"].' });
    expect(model.requests(cited)).toHaveLength(2);
    expect(outcomeOf(bad.events)).toEqual({ kind: 'failed', error: 'unsupported_answer' });
    expect(failure(bad.events)!.details?.problems).toEqual([{ kind: 'quote_not_found', call_id: 'call_b3', quote: '9999' }]);
  });
});
