import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmClient, countMessage, countText, type ChatResult, type RoleEndpoint } from '@hermes/llm';
import { SCRIPTED_PROFILES, cleanupAll, startScriptedLlm, type ScriptedLlm, type ScriptedProfile } from '@hermes/testkit';
import { ReasoningSplitter } from '../src/reasoning-split.js';

let llm: ScriptedLlm;

function client(opts: { keepReasoning?: boolean } = {}): LlmClient {
  const worker: RoleEndpoint = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'worker-model' };
  return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0, timeoutMs: 5_000, ...opts });
}

const hello = [{ role: 'user' as const, content: 'hello' }];
const writeTwo = {
  toolCalls: [
    { id: 'call_a', name: 'file_write', arguments: { filePath: 'hello.py' } },
    { id: 'call_b', name: 'file_write', arguments: { filePath: 'world.py' } },
  ],
};

async function chat(c: LlmClient, stream: boolean, messages = hello): Promise<{ result: ChatResult; deltas: string[] }> {
  const deltas: string[] = [];
  const result = await c.chat({ role: 'worker', messages, ...(stream ? { onDelta: (t: string) => deltas.push(t) } : {}) });
  return { result, deltas };
}

beforeAll(async () => {
  llm = await startScriptedLlm();
});
beforeEach(() => {
  llm.clearQueue();
  llm.resetStats();
  llm.setProfile('openai');
});
afterAll(async () => {
  await cleanupAll();
});

describe.each(SCRIPTED_PROFILES.map((p) => [p] as [ScriptedProfile]))('the %s wire shape', (profile) => {
  beforeEach(() => llm.setProfile(profile));

  it.each([[true], [false]])('two parallel tool calls come back as two calls (streamed: %s)', async (stream) => {
    llm.enqueue(writeTwo);
    const { result } = await chat(client(), stream);
    expect(result.toolCalls).toEqual([
      { id: 'call_a', name: 'file_write', arguments: '{"filePath":"hello.py"}' },
      { id: 'call_b', name: 'file_write', arguments: '{"filePath":"world.py"}' },
    ]);
    expect(result.finishReason).toBe('tool_calls');
  });

  it.each([[true], [false]])('usage is never 0 when tokens were used (streamed: %s)', async (stream) => {
    llm.enqueue({ content: 'the answer is four' });
    const { result } = await chat(client(), stream);
    expect(result.usage.input_tokens).toBeGreaterThan(0);
    expect(result.usage.output_tokens).toBeGreaterThan(0);
  });

  it('inline <think> never reaches the answer or the streamed deltas', async () => {
    llm.enqueue({ content: '<think>\nThe user greets me; I should greet back.</think>\n\nHello there!' });
    const { result, deltas } = await chat(client({ keepReasoning: true }), true);
    expect(result.content).toBe('Hello there!');
    expect(deltas.join('')).not.toMatch(/think|greet back/);
    expect(result.reasoning).toBe('The user greets me; I should greet back.');
    expect(result.reasoningTokens).toBeGreaterThan(0);
  });
});

describe('servers that differ', () => {
  it('a stream without a usage chunk (Ollama) is counted with the tokenizer and marked estimated', async () => {
    llm.setProfile('ollama');
    llm.enqueue({ content: 'the answer is four' });
    const { result } = await chat(client(), true);
    expect(result.usageEstimated).toBe(true);
    expect(result.usage).toEqual({
      input_tokens: countMessage({ content: 'hello' }, 'o200k_base'),
      output_tokens: countText('the answer is four', 'o200k_base'),
    });
  });

  it('reported usage is taken as it is and not marked estimated', async () => {
    llm.enqueue({ content: 'four', usage: { prompt_tokens: 123, completion_tokens: 45 } });
    const { result } = await chat(client(), true);
    expect(result.usage).toEqual({ input_tokens: 123, output_tokens: 45 });
    expect(result.usageEstimated).toBeUndefined();
  });

  it.each([['vllm'], ['ollama'], ['llamacpp']] as [ScriptedProfile][])('%s reasoning field is split from the answer, plain and streamed', async (profile) => {
    llm.setProfile(profile);
    for (const stream of [true, false]) {
      llm.enqueue({ content: 'Paris.', reasoning: 'France has its capital in Paris.' });
      const { result, deltas } = await chat(client({ keepReasoning: true }), stream);
      expect(result.content).toBe('Paris.');
      expect(result.reasoning).toBe('France has its capital in Paris.');
      if (stream) expect(deltas.join('')).toBe('Paris.');
    }
  });

  it('reasoning is dropped from the result unless LLM_KEEP_REASONING keeps it, and still counted', async () => {
    llm.setProfile('ollama');
    llm.enqueue({ content: 'Paris.', reasoning: 'France has its capital in Paris.' });
    const { result } = await chat(client(), true);
    expect(result.reasoning).toBeUndefined();
    expect(result.content).toBe('Paris.');
    const reasoningTokens = countText('France has its capital in Paris.', 'o200k_base');
    expect(result.reasoningTokens).toBe(reasoningTokens);
    expect(result.usage.output_tokens).toBe(countText('Paris.', 'o200k_base') + reasoningTokens);
  });
});

describe('ReasoningSplitter', () => {
  it('splits tags cut across deltas, holding back only what could still become a tag', () => {
    const s = new ReasoningSplitter();
    const parts = ['Hi <th', 'ink>plan', ' it</th', 'ink> done <', '3'].map((t) => s.push(t));
    parts.push(s.end());
    expect(parts.map((p) => p.answer).join('')).toBe('Hi  done <3');
    expect(parts.map((p) => p.reasoning).join('')).toBe('plan it');
    expect(parts[0]).toEqual({ answer: 'Hi ', reasoning: '' });
  });

  it('an unclosed <think> is reasoning to the end', () => {
    const s = new ReasoningSplitter();
    const a = s.push('<think>still thinking');
    const b = s.end();
    expect(a.answer + b.answer).toBe('');
    expect(a.reasoning + b.reasoning).toBe('still thinking');
  });
});
