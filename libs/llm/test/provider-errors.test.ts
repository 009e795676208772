import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmClient, LlmError, type RoleEndpoint } from '@hermes/llm';
import { SCRIPTED_PROFILES, cleanupAll, startScriptedLlm, type ScriptedLlm, type ScriptedProfile } from '@hermes/testkit';

let llm: ScriptedLlm;

function client(httpClient: 'undici' | 'fetch' = 'undici'): LlmClient {
  const worker: RoleEndpoint = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'worker-model' };
  return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0, timeoutMs: 5_000, httpClient });
}

async function failure(c = client()): Promise<LlmError> {
  const err: unknown = await c.chat({ role: 'worker', messages: [{ role: 'user', content: 'hello' }] }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LlmError);
  return err as LlmError;
}

beforeAll(async () => {
  llm = await startScriptedLlm();
});
beforeEach(() => {
  llm.clearQueue();
  llm.setProfile('openai');
});
afterAll(async () => {
  await cleanupAll();
});

// Ollama truncates an over-long prompt to its window instead of refusing it: it has no such answer.
const refusing = SCRIPTED_PROFILES.filter((p) => p !== 'ollama');

describe.each(refusing.map((p) => [p] as [ScriptedProfile]))('the %s profile', (profile) => {
  it.each([['undici'], ['fetch']] as const)(
    'an over-long prompt is context_too_long, not retryable, with the provider message kept (%s)',
    async (httpClient) => {
      llm.setProfile(profile);
      llm.enqueue({ status: 400, overflow: { promptTokens: 9000, contextTokens: 4096 } });
      const err = await failure(client(httpClient));
      expect(err.code).toBe('context_too_long');
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/4096/);
      expect(err.toWire()).toMatchObject({ code: 'context_too_long', retryable: false, details: { status: 400, model: 'worker-model' } });
    },
  );

  it("keeps the provider's message of any other rejection, in whatever shape the server sends it", async () => {
    llm.setProfile(profile);
    llm.enqueue({ status: 400, message: 'max_tokens must be at least 1, got -186.' });
    const err = await failure();
    expect(err.code).toBe('llm_error');
    expect(err.message).toContain('max_tokens must be at least 1, got -186.');
    expect(err.message).not.toContain('no body');
  });
});

describe('error details', () => {
  it("names the window and the prompt size where the server says them (llama.cpp's fields, vLLM's wording)", async () => {
    llm.setProfile('llamacpp');
    llm.enqueue({ status: 400, overflow: { promptTokens: 9000, contextTokens: 4096 } });
    expect((await failure()).details).toMatchObject({ context_tokens: 4096, prompt_tokens: 9000 });
    llm.setProfile('vllm');
    llm.enqueue({ status: 400, overflow: { promptTokens: 9000, contextTokens: 4096 } });
    expect((await failure()).details).toMatchObject({ context_tokens: 4096, prompt_tokens: 9000 });
  });

  it('honours retry-after-ms before Retry-After, and Retry-After alone', async () => {
    llm.enqueue({ status: 429, retryAfterMs: 1500 });
    expect((await failure()).details.retryAfterMs).toBe(1500);
    llm.enqueue({ status: 429, retryAfterMs: 250, retryAfterSeconds: 7 });
    expect((await failure()).details.retryAfterMs).toBe(250);
    llm.enqueue({ status: 429, retryAfterSeconds: 2 });
    expect((await failure()).details.retryAfterMs).toBe(2000);
    llm.enqueue({ status: 503, retryAfterSeconds: 3 });
    expect((await failure()).details).toMatchObject({ status: 503, retryAfterMs: 3000 });
  });

  it('redacts credentials the provider echoes back', async () => {
    llm.enqueue({ status: 401, message: 'Incorrect API key provided: sk-proj-abcdefghijklmnop1234. Header was Bearer eyJhbGciOiJIUzI1NiJ9.payload' });
    const err = await failure();
    expect(err.message).toContain('Incorrect API key provided');
    expect(err.message).not.toMatch(/abcdefghijklmnop|eyJhbGci/);
  });
});
