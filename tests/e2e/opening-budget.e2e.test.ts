import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEventData } from '@hermes/contracts';
import { lastUserMessageText } from '@hermes/testkit';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, runTask } from './tasks.js';

let stack: Stack;

beforeAll(async () => {
  // A window of 8,192 tokens less the 4,096 kept for the answer and what the system prompt and the
  // stock tools' schemas take leaves under 4,096 (~16 KB) for a task's goal and inputs, so a
  // modest input is enough to be too large.
  stack = await startStack({ serviceEnv: { runtime: { MODEL_CONTEXT_TOKENS: '8192' } } });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe('the opening prompt, through the whole stack', () => {
  it('a task whose inputs do not fit the model window fails input_too_large, and the model gets no request', async () => {
    // The first test on a fresh stack: nothing else has asked the model anything.
    stack.llm.resetStats();
    const rows = Array.from({ length: 100 }, (_, i) => `row ${i}: ${'lorem ipsum dolor sit amet '.repeat(15)}`);

    const { events } = await runTask(stack.bus, { user_id: 'alice', goal: 'summarise these rows', inputs: { rows } });

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'input_too_large' });
    const error = taskEventData(events.at(-1)!, 'failed')!.error;
    expect(error).toMatchObject({ retryable: false });
    const details = error.details as { window_tokens: number; estimated_tokens: number };
    // Less than the window after the answer's 4,096: the tools' schemas are kept free too.
    expect(details.window_tokens).toBeGreaterThan(0);
    expect(details.window_tokens).toBeLessThan(4_096);
    expect(details.estimated_tokens).toBeGreaterThan(details.window_tokens);
    expect(stack.llm.requests).toHaveLength(0);
  });

  it('a task with nested inputs that fit completes, and the model receives them as compact JSON', async () => {
    stack.llm.resetStats();
    const inputs = { repo: 'hermes', filters: { labels: ['bug', 'p1'], since: { days: 7 } } };

    const { events } = await runTask(stack.bus, { user_id: 'alice', goal: 'triage the issues', inputs });

    expect(outcomeOf(events).kind).toBe('completed');
    // The memory service may ask the model too (long-term memory after the session append); only the agent's call is ours.
    const agentCalls = stack.llm.requests.filter((r) => lastUserMessageText(r.body).startsWith('triage the issues'));
    expect(agentCalls.map((r) => lastUserMessageText(r.body))).toEqual([`triage the issues\n\nInputs (JSON):\n${JSON.stringify(inputs)}`]);
  });
});
