import { describe, expect, it } from 'vitest';
import { lastUserMessageText } from '@hermes/testkit';
import type { ToolDefinition } from '@hermes/contracts';
import { withAskUser } from '../src/ask-user.js';
import { RESERVE_OUTPUT_TOKENS, toolReserveTokens } from '../src/tool-reserve.js';
import { MODEL, makeJob as job } from './runtime-fixture.js';
import { runtimePerFile } from './runtime-per-file.js';
import { kinds } from './support.js';

const runtime = runtimePerFile();

// 8,192 less the 4,096 kept for the answer and the system prompt and tool schemas (about 250
// tokens with the fixture's one tool) leaves about 3,800 tokens (~15 KB of prompt) for the opening.
const SMALL_WINDOW = 8_192;

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
      { outcome: 'failed', attempt: 1, usage: { input_tokens: 0, output_tokens: 0 }, error: { code: 'input_too_large', retryable: false } },
    ]);
    const [result] = await f.results();
    const details = result!.error!.details as { estimated_tokens: number; window_tokens: number };
    expect(details.window_tokens).toBe(SMALL_WINDOW - RESERVE_OUTPUT_TOKENS - f.reads.at(-1)!.reserve_tools!);
    expect(details.estimated_tokens).toBeGreaterThan(details.window_tokens);
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

  it('dependency outputs too large together for the window fail the subtask that reads them with input_too_large, and the model gets no request', async () => {
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

    expect(await f.results()).toMatchObject([
      { outcome: 'failed', attempt: 1, error: { code: 'budget_exceeded', retryable: false, details: { max_tokens: 200 } } },
    ]);
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

  it('keeps room for the tools the job offers, counted from their schemas: an opening that fits beside one tool does not fit beside forty large ones', async () => {
    const big = (i: number): ToolDefinition => ({
      name: `crm_update_${i}`,
      description: `Updates record kind ${i} in the CRM.`,
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 30 }, (_, k) => [`field_${k}`, { type: 'string', description: `the value of field ${k} of the record` }]),
        ),
      },
      idempotent: false,
    });
    const many = Array.from({ length: 40 }, (_, i) => big(i));
    // ~3,000 tokens of input: inside the window less the answer and one tool, not beside forty large schemas.
    const inputs = { notes: 'word '.repeat(2_400) };

    const few = await runtime.start({ contextTokens: SMALL_WINDOW });
    const fits = job({ inputs });
    runtime.llm.enqueue({ content: 'noted' });
    await few.runner.run(fits, await few.deliver(fits));
    expect(await few.results()).toMatchObject([{ outcome: 'succeeded' }]);
    const oneTool = few.reads.at(-1)!.reserve_tools!;

    const crowded = await runtime.start({ contextTokens: SMALL_WINDOW, tools: many });
    const refused = job({ inputs });
    await crowded.runner.run(refused, await crowded.deliver(refused));
    const reserve = crowded.reads.at(-1)!.reserve_tools!;
    // The session context was asked to leave exactly the tools' (ask_user among them) and system prompt's tokens free.
    expect(reserve).toBe(toolReserveTokens(refused, withAskUser(refused, many), MODEL));
    expect(reserve).toBeGreaterThan(oneTool + 10_000);
    expect(await crowded.results()).toMatchObject([
      { outcome: 'failed', error: { code: 'input_too_large', details: { window_tokens: SMALL_WINDOW - RESERVE_OUTPUT_TOKENS - reserve } } },
    ]);
    expect(runtime.llm.requests).toHaveLength(1);
  });
});
