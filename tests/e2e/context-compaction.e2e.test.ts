import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEventData } from '@hermes/contracts';
import type { RecordedRequest, ScriptedResponse } from '@hermes/testkit';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { callTools, ModelScript, toolMessages } from './model-script.js';
import { outcomeOf, runTask, steps } from './tasks.js';

// A model whose window holds 59 messages of this conversation: the loop's 30th call (system,
// goal and 29 tool turns of two messages each: 60) is the first it refuses with the vLLM-style
// context-length error. The runtime then folds the conversation with the memory service's
// summariser and asks again. Real processes on the shared stack; the model is scripted.
const WINDOW_MESSAGES = 59;
const SUMMARY = 'Added 1 to 29 months to 2025-01-31 one call at a time; the last result is the next to report.';

let stack: SharedStack;
let model: ModelScript;

const isSummarizer = (r: RecordedRequest) => {
  const system = r.body.messages?.find((m) => m.role === 'system');
  return typeof system?.content === 'string' && system.content.startsWith('You maintain the running summary');
};
const summarizerAnswer: ScriptedResponse = {
  content: JSON.stringify({ summary: SUMMARY, pinned: [{ kind: 'deadline', text: 'The user wants the report by Friday.' }] }),
};
const overflow: ScriptedResponse = { status: 400, overflow: { promptTokens: 40_000, contextTokens: 32_768 } };
const fitsOr = (turn: ScriptedResponse) => (r: RecordedRequest) => ((r.body.messages?.length ?? 0) > WINDOW_MESSAGES ? overflow : turn);
const dateTurns = (n: number) =>
  Array.from({ length: n }, (_, i) => fitsOr(callTools({ id: `call_${i + 1}`, name: 'date_add', arguments: { date: '2025-01-31', months: i + 1 } })));
const summarizerRequests = () => stack.llm.requests.filter(isSummarizer);

beforeAll(async () => {
  stack = await sharedStack();
  model = new ModelScript(stack.llm, { unscripted: (r) => (isSummarizer(r) ? summarizerAnswer : { content: 'Unscripted answer' }) });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe('context_too_long mid-task', () => {
  it('a context-length error on turn 30 of a long task is compacted with the summariser and the task completes', async () => {
    const goal = 'add months to the invoice date thirty times';
    model.on(goal, dateTurns(29), { then: fitsOr({ content: 'The last date is 2027-06-30.' }) });
    const before = summarizerRequests().length;
    // 31 LLM calls and 29 tool calls through real services on a loaded 2-core machine: generous.
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal, budget: { max_steps: 40 } }, 120_000);

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'The last date is 2027-06-30.' });
    const asked = model.requests(goal);
    // 29 tool turns, the refused 30th call, and the same call after compaction.
    expect(asked).toHaveLength(31);
    expect(asked[29]!.body.messages).toHaveLength(60);

    // The compaction is a step event of step 30, before that step's LLM call.
    const [compacted] = steps(events, 'compacted');
    expect(compacted).toMatchObject({ step: 30, detail: { reason: 'context_too_long', folded_messages: 56, summarizer_calls: 1 } });
    expect(steps(events, 'compacted')).toHaveLength(1);
    const kinds = events
      .flatMap((e) => taskEventData(e, 'step') ?? [])
      .filter((s) => s.step === 30)
      .map((s) => s.kind);
    expect(kinds).toEqual(['compacted', 'llm_call']);

    // The summariser read the folded turns (the first call's arguments among them, not the last turn's).
    const summarizing = summarizerRequests()
      .slice(before)
      .find((r) => JSON.stringify(r.body.messages).includes('\\"months\\":1}'));
    expect(summarizing).toBeDefined();
    expect(JSON.stringify(summarizing!.body.messages)).not.toContain('\\"months\\":29}');

    // The call asked again holds the summary and the pinned deadline, the goal, and only the last turn.
    const retried = asked[30]!.body.messages!;
    expect(retried.length).toBeLessThanOrEqual(WINDOW_MESSAGES);
    const texts = retried.map((m) => (typeof m.content === 'string' ? m.content : ''));
    expect(texts.some((t) => t.includes(SUMMARY) && t.includes('The user wants the report by Friday.'))).toBe(true);
    expect(retried.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([goal]);
    expect(toolMessages(asked[30]!.body).map((m) => m.tool_call_id)).toEqual(['call_29']);
    expect(toolMessages(asked[30]!.body)[0]!.content).toMatchObject({ ok: true });
  }, 150_000);

  it("a conversation that still does not fit after compaction fails with context_too_long (compacted, not the caller's fault), asked once more only", async () => {
    const goal = 'read a page that never fits the window';
    // Every call from the third on is refused, however short the conversation got.
    model.on(goal, dateTurns(2), { then: overflow });
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal, budget: { max_steps: 10 } }, 60_000);

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'context_too_long' });
    const failed = taskEventData(events.at(-1)!, 'failed')!;
    expect(failed.error).toMatchObject({ retryable: false, details: { compacted: true, step: 3, folded_messages: 2 } });
    expect(failed.error.message).toContain('even after the conversation was compacted');
    expect(steps(events, 'compacted')).toHaveLength(1);
    // The refused call, the one after compaction, and no redelivery or re-plan.
    expect(model.requests(goal)).toHaveLength(4);
  }, 90_000);
});
