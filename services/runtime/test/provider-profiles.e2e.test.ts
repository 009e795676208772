import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SCRIPTED_PROFILES,
  cleanupAll,
  startNatsServer,
  startScriptedLlm,
  type NatsServerHandle,
  type ScriptedLlm,
  type ScriptedProfile,
} from '@hermes/testkit';
import { MODEL, makeJob as job, runtimeFixture, toolDefinition, type RuntimeFixture } from './runtime-fixture.js';

let nats: NatsServerHandle;
const servers: ScriptedLlm[] = [];
const fixtures: RuntimeFixture[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.close()));
  await cleanupAll();
});

// The same agent loop against each server's wire shape: a streamed turn of two parallel tool calls,
// then an answer that thinks inline first.
describe.each(SCRIPTED_PROFILES.map((p) => [p] as [ScriptedProfile]))('an agent job against the %s profile', (profile) => {
  it('runs both parallel calls, keeps <think> out of the answer and the session, and never counts 0 tokens', async () => {
    const llm = await startScriptedLlm({ profile });
    servers.push(llm);
    const f = await runtimeFixture(nats.url, llm, { tools: [toolDefinition('file_write')], keepReasoning: true });
    fixtures.push(f);
    const j = job({ stream: true });
    llm.enqueue(
      {
        toolCalls: [
          { id: 'call_a', name: 'file_write', arguments: { filePath: 'hello.py' } },
          { id: 'call_b', name: 'file_write', arguments: { filePath: 'world.py' } },
        ],
      },
      { content: '<think>Both files are written; say so.</think>\n\nWrote hello.py and world.py.' },
    );

    await f.runner.run(j, await f.deliver(j));

    expect(f.toolCalls.map((c) => [c.req.tool, c.req.arguments]).sort()).toEqual([
      ['file_write', '{"filePath":"hello.py"}'],
      ['file_write', '{"filePath":"world.py"}'],
    ]);
    const [result] = await f.results();
    expect(result).toMatchObject({ outcome: 'succeeded', output: 'Wrote hello.py and world.py.' });
    expect(result?.usage?.input_tokens).toBeGreaterThan(0);
    expect(result?.usage?.output_tokens).toBeGreaterThan(0);
    expect(JSON.stringify(f.appends)).toContain('Wrote hello.py and world.py.');
    expect(JSON.stringify(f.appends)).not.toMatch(/think|say so/);
    const steps = await f.steps(j.task_id);
    expect(
      steps
        .filter((d) => d.kind === 'token_delta')
        .map((d) => d.detail?.text)
        .join(''),
    ).not.toMatch(/think|say so/);
    const calls = steps.filter((d) => d.kind === 'llm_call');
    expect(calls).toHaveLength(2);
    for (const c of calls) expect((c.usage?.input_tokens ?? 0) + (c.usage?.output_tokens ?? 0)).toBeGreaterThan(0);
    // Only a server that sends no usage chunk has its tokens counted by Hermes, and says so.
    expect(calls.map((c) => c.detail?.usage_estimated === true)).toEqual(profile === 'ollama' ? [true, true] : [false, false]);
    expect(calls[1]?.detail?.reasoning).toBe('Both files are written; say so.');
    expect(calls[1]?.detail?.reasoning_tokens).toBeGreaterThan(0);
  });
});

describe("a model's context window from its pool", () => {
  it('is the window the session context is fitted into and the opening prompt is checked against, over MODEL_CONTEXT_TOKENS', async () => {
    const llm = await startScriptedLlm({ profile: 'ollama' });
    servers.push(llm);
    // 16,384 less the 4,096 tokens kept for the answer and the tool schemas' and system prompt's leaves ~12,000 for the opening.
    const pools = [{ name: 'ollama', capacity: 2, provider: 'ollama' as const, context_tokens: { [MODEL]: 16_384 } }];
    const f = await runtimeFixture(nats.url, llm, { pools, contextTokens: 128_000 });
    fixtures.push(f);

    const small = job();
    llm.enqueue({ content: 'done' });
    await f.runner.run(small, await f.deliver(small));
    expect(f.reads.at(-1)?.context_limit).toBe(16_384);

    // ~15,000 tokens of input: fits 128k, not this model's window.
    const big = job({ inputs: { notes: 'word '.repeat(60_000) } });
    await f.runner.run(big, await f.deliver(big));
    const results = await f.results();
    expect(results.map((r) => r.outcome)).toEqual(['succeeded', 'failed']);
    expect(results[1]?.error).toMatchObject({ code: 'input_too_large', details: { window_tokens: 16_384 - 4_096 - f.reads.at(-1)!.reserve_tools! } });
    expect(llm.requests).toHaveLength(1);
  });
});

describe('a plan job', () => {
  it("asks for the plan in the contracts' Plan schema where the provider takes json_schema, and parses the answer", async () => {
    const llm = await startScriptedLlm({ profile: 'vllm' });
    servers.push(llm);
    const f = await runtimeFixture(nats.url, llm, { pools: [{ name: 'vllm', capacity: 2, provider: 'vllm' }] });
    fixtures.push(f);
    const plan = { subtasks: [{ id: 'answer', intent: 'answer it', depends_on: [] }] };
    llm.enqueue({ content: JSON.stringify(plan) });
    const j = job({ kind: 'plan', model_role: 'planner' });

    await f.runner.run(j, await f.deliver(j));

    const format = llm.requests[0]?.body.response_format as { type: string; json_schema: { name: string; schema: { title?: string; required?: string[] } } };
    expect(format).toMatchObject({ type: 'json_schema', json_schema: { name: 'plan', schema: { title: 'Plan', required: ['subtasks'] } } });
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', plan }]);
  });
});
