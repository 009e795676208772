import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmClient, LlmError, roleEndpoints, type Permit, type PermitProvider, type RoleEndpoint } from '@hermes/llm';
import { cleanupAll, freePort, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';

let llm: ScriptedLlm;
let plannerLlm: ScriptedLlm;

function endpoint(server: ScriptedLlm, model: string, apiKey = 'test-key'): RoleEndpoint {
  return { baseUrl: server.baseUrl, apiKey, model };
}

function client(opts: Partial<ConstructorParameters<typeof LlmClient>[0]> = {}): LlmClient {
  const worker = endpoint(llm, 'worker-model');
  return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0, timeoutMs: 5_000, ...opts });
}

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LlmError);
  return err as LlmError;
}

const hello = [{ role: 'user' as const, content: 'hello' }];

/** Counts acquisitions and releases, and grants at most `limit` permits at a time. */
class CountingPermits implements PermitProvider {
  acquired: { pool: string; estimatedTokens: number }[] = [];
  released = 0;
  held = 0;
  private waiting: (() => void)[] = [];
  constructor(private readonly limit = Infinity) {}

  async acquire(req: { pool: string; estimatedTokens: number }): Promise<Permit> {
    this.acquired.push({ pool: req.pool, estimatedTokens: req.estimatedTokens });
    while (this.held >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    this.held++;
    let done = false;
    return {
      release: async () => {
        if (done) throw new Error('permit released twice');
        done = true;
        this.held--;
        this.released++;
        this.waiting.shift()?.();
      },
    };
  }
}

beforeAll(async () => {
  llm = await startScriptedLlm();
  plannerLlm = await startScriptedLlm();
});

beforeEach(() => {
  for (const server of [llm, plannerLlm]) {
    server.clearQueue();
    server.resetStats();
  }
});

afterAll(async () => {
  await cleanupAll();
});

describe('LlmClient.chat', () => {
  it('returns the content, finish reason, model and token usage', async () => {
    llm.enqueue({ content: 'hi there', usage: { prompt_tokens: 11, completion_tokens: 3 } });

    const result = await client().chat({ role: 'worker', messages: hello });

    expect(result).toEqual({
      content: 'hi there',
      toolCalls: [],
      finishReason: 'stop',
      model: 'worker-model',
      usage: { input_tokens: 11, output_tokens: 3 },
      responseId: expect.stringMatching(/^chatcmpl-/),
    });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.body).toMatchObject({ model: 'worker-model', messages: hello });
    expect(llm.requests[0]!.body).not.toHaveProperty('tools');
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer test-key');
  });

  it('returns tool calls with their ids and raw argument strings, and sends the tools', async () => {
    llm.enqueue({
      toolCalls: [
        { id: 'call_1', name: 'echo', arguments: { text: 'hi' } },
        { name: 'time_now', arguments: '{not json' },
      ],
    });
    const tools = [{ type: 'function' as const, function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } } }];

    const result = await client().chat({ role: 'worker', messages: hello, tools });

    expect(result.finishReason).toBe('tool_calls');
    expect(result.content).toBeNull();
    expect(result.toolCalls).toEqual([
      { id: 'call_1', name: 'echo', arguments: '{"text":"hi"}' },
      { id: expect.any(String), name: 'time_now', arguments: '{not json' },
    ]);
    expect(llm.requests[0]!.body.tools).toEqual(tools);
  });

  it('sends each role to its own endpoint, model and key', async () => {
    const roles = {
      worker: endpoint(llm, 'small-model', 'worker-key'),
      planner: endpoint(plannerLlm, 'big-model', 'planner-key'),
      summarizer: endpoint(llm, 'cheap-model', 'worker-key'),
      embedder: endpoint(llm, 'embed-model', 'worker-key'),
    };
    const c = new LlmClient({ roles, maxRetries: 0 });

    const planned = await c.chat({ role: 'planner', messages: hello });
    const worked = await c.chat({ role: 'worker', messages: hello });
    const summed = await c.chat({ role: 'summarizer', messages: hello });

    expect([planned.model, worked.model, summed.model]).toEqual(['big-model', 'small-model', 'cheap-model']);
    expect(plannerLlm.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([['big-model', 'Bearer planner-key']]);
    expect(llm.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([
      ['small-model', 'Bearer worker-key'],
      ['cheap-model', 'Bearer worker-key'],
    ]);
    expect(c.modelFor('planner')).toBe('big-model');
  });
});

describe('LlmClient.chat errors', () => {
  it('429 is llm_rate_limited, retryable, with retryAfterMs from Retry-After', async () => {
    llm.enqueue({ status: 429, retryAfterSeconds: 2 });

    const err = await failure(client().chat({ role: 'worker', messages: hello }));

    expect(err.code).toBe('llm_rate_limited');
    expect(err.retryable).toBe(true);
    expect(err.details).toEqual({ status: 429, model: 'worker-model', retryAfterMs: 2_000 });
    expect(err.toWire()).toEqual({
      code: 'llm_rate_limited',
      message: err.message,
      retryable: true,
      details: { status: 429, model: 'worker-model', retryAfterMs: 2_000 },
    });
  });

  it.each([
    { status: 500, code: 'llm_unavailable', retryable: true },
    { status: 503, code: 'llm_unavailable', retryable: true },
    { status: 409, code: 'llm_unavailable', retryable: true },
    { status: 408, code: 'llm_timeout', retryable: true },
    { status: 400, code: 'llm_error', retryable: false },
    { status: 401, code: 'llm_error', retryable: false },
    { status: 404, code: 'llm_error', retryable: false },
  ])('HTTP $status is $code (retryable: $retryable)', async ({ status, code, retryable }) => {
    llm.enqueue({ status, message: `scripted ${status}` });

    const err = await failure(client().chat({ role: 'worker', messages: hello }));

    expect(err).toMatchObject({ name: 'LlmError', code, retryable, details: { status, model: 'worker-model' } });
    expect(llm.requests).toHaveLength(1);
  });

  it('a refused connection is llm_unavailable and retryable', async () => {
    const closedPort = await freePort();
    const worker = { baseUrl: `http://127.0.0.1:${closedPort}/v1`, apiKey: 'k', model: 'worker-model' };
    const c = new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0 });

    const err = await failure(c.chat({ role: 'worker', messages: hello }));

    expect(err).toMatchObject({ code: 'llm_unavailable', retryable: true });
  });

  it('a model that does not answer within timeoutMs is llm_timeout', async () => {
    llm.enqueue({ hang: true });
    const started = Date.now();

    const err = await failure(client({ timeoutMs: 300 }).chat({ role: 'worker', messages: hello }));

    expect(err).toMatchObject({ code: 'llm_timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('a call aborted through its signal is llm_timeout', async () => {
    llm.enqueue({ hang: true });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);

    const err = await failure(client().chat({ role: 'worker', messages: hello, signal: abort.signal }));

    expect(err).toMatchObject({ code: 'llm_timeout', retryable: true });
  });

  it("leaves no listener on the caller's signal once a call has ended, so a job's signal does not collect one per call", async () => {
    const job = new AbortController();
    const c = client({ maxRetries: 1 });
    for (let i = 0; i < 12; i++) llm.enqueue({ content: `answer ${i}` });
    llm.enqueue({ status: 503 }, { content: 'after a retry' });
    for (let i = 0; i < 12; i++) await c.chat({ role: 'worker', messages: hello, signal: job.signal });
    expect((await c.chat({ role: 'worker', messages: hello, signal: job.signal })).content).toBe('after a retry');
    expect(getEventListeners(job.signal, 'abort')).toHaveLength(0);
    // The signal still reaches a call in flight.
    llm.enqueue({ hang: true });
    setTimeout(() => job.abort(), 100);
    expect(await failure(c.chat({ role: 'worker', messages: hello, signal: job.signal }))).toMatchObject({ code: 'llm_timeout' });
  });

  it('retries a retryable failure up to maxRetries times within one chat', async () => {
    llm.enqueue({ status: 503 }, { content: 'second time lucky' }, { status: 500 }, { status: 500 });
    const c = client({ maxRetries: 1 });

    const result = await c.chat({ role: 'worker', messages: hello });
    const err = await failure(c.chat({ role: 'worker', messages: hello }));

    expect(result.content).toBe('second time lucky');
    expect(err.code).toBe('llm_unavailable');
    expect(llm.requests).toHaveLength(4);
  });
});

describe('PermitProvider seam', () => {
  it('takes one permit per attempt from the model pool, and releases it after success and failure alike', async () => {
    const permits = new CountingPermits();
    const c = client({ permits, maxRetries: 1 });
    llm.enqueue({ content: 'ok' }, { status: 500 }, { content: 'ok after retry' }, { status: 400 });

    await c.chat({ role: 'worker', messages: hello });
    await c.chat({ role: 'worker', messages: hello });
    await failure(c.chat({ role: 'worker', messages: hello }));

    // ok | 500 then ok on the retry | 400 (not retryable): four attempts, four permits.
    expect(permits.acquired).toHaveLength(4);
    expect(permits.acquired.every((a) => a.pool === c.poolFor('worker') && a.estimatedTokens > 0)).toBe(true);
    expect(permits.released).toBe(4);
    expect(permits.held).toBe(0);
  });

  it('releases the permit when the endpoint cannot be reached or times out', async () => {
    const permits = new CountingPermits();
    llm.enqueue({ hang: true });

    await failure(client({ permits, timeoutMs: 200 }).chat({ role: 'worker', messages: hello }));

    expect(permits.released).toBe(1);
    expect(permits.held).toBe(0);
  });

  it('a provider granting one permit at a time keeps calls to the model one at a time', async () => {
    const permits = new CountingPermits(1);
    const c = client({ permits });
    llm.setLatency(50);
    try {
      const results = await Promise.all([1, 2, 3].map((n) => c.chat({ role: 'worker', messages: [{ role: 'user', content: `call ${n}` }] })));

      expect(results).toHaveLength(3);
      const arrivals = llm.requests.map((r) => r.receivedAt);
      expect(arrivals).toHaveLength(3);
      // Each call reaches the model only after the previous one's 50 ms answer.
      expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(45);
      expect(arrivals[2]! - arrivals[1]!).toBeGreaterThanOrEqual(45);
      expect(permits.released).toBe(3);
    } finally {
      llm.setLatency(0);
    }
  });
});

describe('roleEndpoints', () => {
  const base = {
    OPENAI_BASE_URL: 'http://llm.local/v1',
    OPENAI_API_KEY: 'shared-key',
    HERMES_MODEL_WORKER: 'worker-model',
    LLM_TIMEOUT_MS: 60_000,
    LLM_MAX_RETRIES: 2,
  };

  it('uses the worker endpoint and model for every role unless told otherwise', () => {
    const roles = roleEndpoints(base);

    const worker = { baseUrl: 'http://llm.local/v1', apiKey: 'shared-key', model: 'worker-model' };
    expect(roles).toEqual({ worker, planner: worker, reviewer: worker, summarizer: worker, embedder: worker });
  });

  it('role-specific settings override the shared ones', () => {
    const roles = roleEndpoints({
      ...base,
      HERMES_MODEL_PLANNER: 'planner-model',
      HERMES_PLANNER_BASE_URL: 'http://planner.local/v1',
      HERMES_PLANNER_API_KEY: 'planner-key',
      HERMES_MODEL_SUMMARIZER: 'summary-model',
      HERMES_MODEL_REVIEWER: 'review-model',
    });

    expect(roles.planner).toEqual({ baseUrl: 'http://planner.local/v1', apiKey: 'planner-key', model: 'planner-model' });
    expect(roles.summarizer).toEqual({ baseUrl: 'http://llm.local/v1', apiKey: 'shared-key', model: 'summary-model' });
    expect(roles.reviewer).toEqual({ baseUrl: 'http://llm.local/v1', apiKey: 'shared-key', model: 'review-model' });
    expect(roles.worker.model).toBe('worker-model');
  });
});
