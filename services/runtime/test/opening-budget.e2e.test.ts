import { describe, expect, it } from 'vitest';
import { lastUserMessageText } from '@hermes/testkit';
import { makeJob as job } from './runtime-fixture.js';
import { runtimePerFile } from './runtime-per-file.js';
import { kinds } from './support.js';

const runtime = runtimePerFile();

// 16,384 less the runtime's 4,096 + 8,192 reserved tokens leaves a window of 4,096 tokens
// (~16 KB of prompt) for the opening message.
const SMALL_WINDOW = 16_384;

/** `{"a":{"a":...{"leaf":true}...}}`, 6 characters a level. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe('the opening prompt within the window and the budget', () => {
  it('an agent job whose inputs nest 4,000 deep and do not fit the window fails with input_too_large, and the model gets no request', async () => {
    const f = await runtime.start({ contextTokens: SMALL_WINDOW });
    const j = job({ inputs: { request: nested(4_000) } });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([
      { outcome: 'failed', attempt: 1, usage: { input_tokens: 0, output_tokens: 0 }, error: { code: 'input_too_large', retryable: false, details: { window_tokens: 4_096 } } },
    ]);
    const [result] = await f.results();
    expect((result!.error!.details as { estimated_tokens: number }).estimated_tokens).toBeGreaterThan(4_096);
    expect(runtime.llm.requests).toHaveLength(0);
    expect(kinds(await f.events(j.task_id))).toEqual(['started']);
    expect(f.appends).toEqual([]);
  });

  it('a plan job whose planning context does not fit the window fails with input_too_large, and the model gets no request', async () => {
    const f = await runtime.start({ contextTokens: SMALL_WINDOW });
    const j = job({ kind: 'plan', model_role: 'planner', subtask_id: 'plan', inputs: { task_inputs: { request: nested(4_000) }, max_subtasks: 4 } });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([{ outcome: 'failed', attempt: 1, error: { code: 'input_too_large', retryable: false } }]);
    expect(runtime.llm.requests).toHaveLength(0);
  });

  it("dependency outputs too large together for the window fail the subtask that reads them with input_too_large, and the model gets no request", async () => {
    const f = await runtime.start({ contextTokens: SMALL_WINDOW });
    // As the dispatcher builds it: each output within its 64k-character cap, together over the window.
    const dependencies = { fetch_a: 'log line\n'.repeat(4_000), fetch_b: 'log line\n'.repeat(4_000) };
    const j = job({ subtask_id: 'report', inputs: { task_goal: 'summarise the incident', dependencies } });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([{ outcome: 'failed', error: { code: 'input_too_large', retryable: false } }]);
    expect(runtime.llm.requests).toHaveLength(0);
  });

  it('an opening prompt inside the window but over budget.max_tokens fails with budget_exceeded, and the model gets no request', async () => {
    const f = await runtime.start();
    const inputs = { rows: Array.from({ length: 50 }, (_, i) => ({ id: i, title: `issue number ${i}` })) };
    const j = job({ inputs, budget: { max_tokens: 200 } });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([{ outcome: 'failed', attempt: 1, error: { code: 'budget_exceeded', retryable: false, details: { max_tokens: 200 } } }]);
    expect(runtime.llm.requests).toHaveLength(0);
  });

  it('a job with nested inputs inside the window and budget completes, and the model receives them as compact JSON', async () => {
    const f = await runtime.start();
    const inputs = { repo: 'hermes', labels: ['bug', 'p1'], request: nested(4_000) };
    const j = job({ goal: 'triage the issues', inputs, budget: { max_tokens: 50_000 } });
    runtime.llm.enqueue({ content: 'two bugs, one p1' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'two bugs, one p1' }]);
    expect(runtime.llm.requests).toHaveLength(1);
    const sent = lastUserMessageText(runtime.llm.requests[0]!.body);
    expect(sent).toBe(`triage the issues\n\nInputs (JSON):\n${JSON.stringify(inputs)}`);
    // 6 characters a level: ~24 KB, where the pretty-printed rendering was ~16 MB.
    expect(sent.length).toBeLessThan(25_000);
  });
});
