import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI, GEN_AI_PROVIDER_NAME_VALUE_OPENAI } from '@opentelemetry/semantic-conventions/incubating';
import { LlmClient, ollamaWindow, PoolResolver, type PoolConfig, type ProviderName } from '@hermes/llm';
import { cleanupAll, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';

let llm: ScriptedLlm;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  llm = await startScriptedLlm();
});
beforeEach(() => {
  llm.resetStats();
  exporter.reset();
});
afterAll(async () => {
  await cleanupAll();
  trace.disable();
});

const params = { temperature: 0.2, top_p: 0.9, max_tokens: 500, seed: 7, parallel_tool_calls: false, stop: ['END'] };

function client(pool: Partial<PoolConfig>): LlmClient {
  const worker = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'm' };
  const planner = { ...worker, model: 'planner-model' };
  const pools = new PoolResolver([{ name: 'local', capacity: 4, ...pool }], { capacity: 8 });
  return new LlmClient({ roles: { worker, planner, summarizer: worker, embedder: worker }, pools, maxRetries: 0, timeoutMs: 5_000 });
}

async function sentBody(provider: ProviderName): Promise<Record<string, unknown>> {
  await client({ provider, params: { worker: params } }).chat({ role: 'worker', messages: [{ role: 'user', content: 'hi' }] });
  const body = llm.requests.at(-1)?.body;
  if (!body) throw new Error('no request');
  return body;
}

describe('provider profiles', () => {
  it('send every configured parameter to OpenAI, vLLM and llama.cpp', async () => {
    for (const provider of ['openai', 'azure-openai', 'vllm', 'llamacpp'] as const) expect(await sentBody(provider)).toMatchObject(params);
  });

  it('leave out what the server does not take: parallel_tool_calls for Ollama and LM Studio, seed as well for a generic server', async () => {
    for (const provider of ['ollama', 'lmstudio'] as const) {
      const body = await sentBody(provider);
      expect(body).toMatchObject({ temperature: 0.2, top_p: 0.9, max_tokens: 500, seed: 7, stop: ['END'] });
      expect(body).not.toHaveProperty('parallel_tool_calls');
    }
    const generic = await sentBody('generic');
    expect(generic).toMatchObject({ temperature: 0.2, top_p: 0.9, max_tokens: 500, stop: ['END'] });
    expect(generic).not.toHaveProperty('seed');
    expect(generic).not.toHaveProperty('parallel_tool_calls');
  });

  it('apply parameters per role: a role without any sends none', async () => {
    await client({ provider: 'openai', params: { planner: { temperature: 0 } } }).chat({ role: 'worker', messages: [{ role: 'user', content: 'hi' }] });
    expect(llm.requests.at(-1)?.body).not.toHaveProperty('temperature');
    await client({ provider: 'openai', params: { planner: { temperature: 0 } } }).chat({ role: 'planner', messages: [{ role: 'user', content: 'hi' }] });
    expect(llm.requests.at(-1)?.body).toMatchObject({ temperature: 0 });
  });

  it('name the provider on chat spans with the GenAI conventions value, with the parameters sent and those dropped', async () => {
    const expected: [ProviderName, string][] = [
      ['openai', GEN_AI_PROVIDER_NAME_VALUE_OPENAI],
      ['azure-openai', GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI],
      ['vllm', 'vllm'],
      ['ollama', 'ollama'],
      ['lmstudio', 'lmstudio'],
      ['llamacpp', 'llamacpp'],
    ];
    for (const [provider] of expected) await sentBody(provider);
    const spans = exporter.getFinishedSpans().filter((s) => s.name === 'chat m');
    expect(spans.map((s) => s.attributes['gen_ai.provider.name'])).toEqual(expected.map(([, name]) => name));
    expect(spans[0]?.attributes).toMatchObject({ 'gen_ai.request.temperature': 0.2, 'gen_ai.request.seed': 7, 'gen_ai.request.stop_sequences': ['END'] });
    expect(spans[3]?.attributes['hermes.llm.params_dropped']).toEqual(['parallel_tool_calls']);
  });

  it('ask for the answer in a JSON schema only where the provider takes json_schema', async () => {
    const schema = { type: 'object', properties: { subtasks: { type: 'array' } }, required: ['subtasks'] };
    for (const provider of ['openai', 'vllm', 'ollama', 'lmstudio', 'llamacpp', 'generic'] as const) {
      await client({ provider }).chat({ role: 'worker', messages: [{ role: 'user', content: 'plan' }], responseSchema: { name: 'plan', schema } });
    }
    const formats = llm.requests.map((r) => r.body.response_format);
    expect(formats.slice(0, 5)).toEqual(Array(5).fill({ type: 'json_schema', json_schema: { name: 'plan', strict: false, schema } }));
    expect(formats[5]).toBeUndefined();
  });

  it("give each model's context window from the pool's context_tokens, and none for a model not listed", () => {
    const c = client({ context_tokens: { m: 8192 } });
    expect(c.contextTokensFor('worker')).toBe(8192);
    expect(c.contextTokensFor('planner')).toBeUndefined();
  });

  it("read a vLLM model's window from /v1/models (max_model_len) when no context_tokens is configured, and nothing from other servers", async () => {
    const vllm = await startScriptedLlm({ profile: 'vllm', contextTokens: 8192 });
    const at = (provider: ProviderName, context_tokens?: Record<string, number>) => {
      const worker = { baseUrl: vllm.baseUrl, apiKey: 'k', model: 'scripted' };
      const pools = new PoolResolver([{ name: 'p', capacity: 1, provider, ...(context_tokens ? { context_tokens } : {}) }], { capacity: 1 });
      return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, pools });
    };
    const detected = at('vllm');
    await detected.detectContextWindows();
    expect(detected.contextTokensFor('worker')).toBe(8192);
    const configured = at('vllm', { scripted: 4096 });
    await configured.detectContextWindows();
    expect(configured.contextTokensFor('worker')).toBe(4096);
    const ollama = at('ollama');
    await ollama.detectContextWindows();
    expect(ollama.contextTokensFor('worker')).toBeUndefined();
    await vllm.close();
    // A server that is gone leaves the window unknown instead of failing.
    const gone = at('vllm');
    await gone.detectContextWindows({ timeoutMs: 1_000 });
    expect(gone.contextTokensFor('worker')).toBeUndefined();
  });

  it("ask Ollama's /api/show once for a model without context_tokens: the Modelfile's num_ctx, else model_info's context length, and say it was detected", async () => {
    const withNumCtx = await startScriptedLlm({ profile: 'ollama', contextTokens: 40_960, numCtx: 8192 });
    const trainedOnly = await startScriptedLlm({ profile: 'ollama', contextTokens: 40_960 });
    const at = (server: { baseUrl: string }, context_tokens?: Record<string, number>) => {
      const worker = { baseUrl: server.baseUrl, apiKey: 'ollama', model: 'qwen3:8b' };
      const pools = new PoolResolver([{ name: 'p', capacity: 1, provider: 'ollama', ...(context_tokens ? { context_tokens } : {}) }], { capacity: 1 });
      return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, pools });
    };
    try {
      const runsWith = at(withNumCtx);
      await runsWith.detectContextWindows();
      expect(runsWith.contextTokensFor('worker')).toBe(8192);
      expect(runsWith.contextWindowOf('worker')).toMatchObject({ tokens: 8192, source: 'detected', detectedFrom: 'num_ctx' });
      // Worker, planner and summarizer share the endpoint and model: asked once, over HTTP, by the model's name.
      expect(withNumCtx.showRequests).toEqual(['qwen3:8b']);
      await runsWith.detectContextWindows();
      expect(withNumCtx.showRequests).toHaveLength(1);

      const trained = at(trainedOnly);
      await trained.detectContextWindows();
      expect(trained.contextWindowOf('planner')).toMatchObject({ tokens: 40_960, source: 'detected', detectedFrom: 'model_info' });

      const configured = at(trainedOnly, { 'qwen3:8b': 16_384 });
      await configured.detectContextWindows();
      expect(configured.contextWindowOf('worker')).toEqual({ tokens: 16_384, source: 'configured' });
      expect(trainedOnly.showRequests).toHaveLength(1);
    } finally {
      await withNumCtx.close();
      await trainedOnly.close();
    }
    // Ollama's server gone: the window stays unknown, start does not fail.
    const gone = at(withNumCtx);
    await gone.detectContextWindows({ timeoutMs: 1_000 });
    expect(gone.contextWindowOf('worker')).toBeUndefined();
  });

  it('read the window of odd /api/show answers only where it is a positive whole number', () => {
    expect(
      ollamaWindow({ parameters: 'stop "<|im_end|>"\nnum_ctx 32768', model_info: { 'general.architecture': 'llama', 'llama.context_length': 131072 } }),
    ).toEqual({ tokens: 32768, from: 'num_ctx' });
    expect(ollamaWindow({ model_info: { 'general.architecture': 'llama', 'llama.context_length': 131072 } })).toEqual({ tokens: 131072, from: 'model_info' });
    expect(ollamaWindow({ model_info: { 'gemma3.context_length': 8192 } })).toEqual({ tokens: 8192, from: 'model_info' });
    expect(ollamaWindow({ parameters: 'num_ctx abc', model_info: { 'general.architecture': 'llama', 'llama.context_length': -1 } })).toBeUndefined();
    expect(ollamaWindow('not json')).toBeUndefined();
    expect(ollamaWindow(null)).toBeUndefined();
  });

  it('take api.openai.com and Azure hosts for what they are when no pool names a provider', () => {
    const at = (baseUrl: string) => new PoolResolver([], { capacity: 1 }).callSettings({ baseUrl, model: 'm', apiKey: 'k' }, 'worker').provider;
    expect(at('https://api.openai.com/v1')).toBe('openai');
    expect(at('https://hermes.openai.azure.com/openai/v1')).toBe('azure-openai');
    expect(at('http://vllm:8000/v1')).toBe('generic');
  });
});
