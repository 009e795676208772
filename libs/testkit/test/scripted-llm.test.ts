import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, startScriptedLlm } from '../src/index.js';
import type { ScriptedLlm } from '../src/index.js';

let llm: ScriptedLlm;
let client: OpenAI;

beforeEach(async () => {
  llm = await startScriptedLlm();
  client = new OpenAI({ baseURL: llm.baseUrl, apiKey: 'test', maxRetries: 0 });
});

afterEach(async () => {
  await llm.close();
});

const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
} as const;

describe('scripted LLM with the OpenAI SDK', () => {
  it('answers from the default responder with the last user message and echoes the model', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'what is 2+2?' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('gpt-test');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Scripted answer: what is 2+2?' });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    const completionTokens = Math.ceil('Scripted answer: what is 2+2?'.length / 4);
    expect(completion.usage).toMatchObject({ completion_tokens: completionTokens });
    expect(completion.usage?.total_tokens).toBe((completion.usage?.prompt_tokens ?? 0) + completionTokens);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.body.model).toBe('gpt-test');
    expect(llm.requests[0]?.headers.authorization).toBe('Bearer test');
  });

  it('serves queued responses first-in first-out, then falls back to the responder', async () => {
    llm.enqueue({ content: 'one', usage: { prompt_tokens: 7, completion_tokens: 3 } }, { content: 'two', finishReason: 'length' });
    expect(llm.queued).toBe(2);
    const ask = (content: string) => client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content }] });
    const first = await ask('a');
    expect(first.choices[0]?.message.content).toBe('one');
    expect(first.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    const second = await ask('b');
    expect(second.choices[0]?.message.content).toBe('two');
    expect(second.choices[0]?.finish_reason).toBe('length');
    llm.setResponder(({ body }) => ({ content: `custom:${body.messages?.length ?? 0}` }));
    expect((await ask('c')).choices[0]?.message.content).toBe('custom:1');
  });

  it('returns tool calls whose arguments parse, with generated ids', async () => {
    llm.enqueue({
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Oslo' } },
        { id: 'call_fixed', name: 'get_time', arguments: '{"tz":"UTC"}' },
      ],
    });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool] });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const calls = (choice?.message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
    expect(calls).toHaveLength(2);
    expect(calls[0]?.id).toMatch(/^call_/);
    expect(calls[0]?.function.name).toBe('get_weather');
    expect(JSON.parse(calls[0]?.function.arguments ?? '')).toEqual({ city: 'Oslo' });
    expect(calls[1]).toMatchObject({ id: 'call_fixed', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } });
    expect(llm.requests[0]?.body.tools).toEqual([weatherTool]);
  });

  it('sends malformed tool-call arguments verbatim', async () => {
    llm.enqueue({ toolCalls: [{ name: 'get_weather', arguments: '{"city": "Oslo",' }] });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function.arguments : undefined).toBe('{"city": "Oslo",');
  });

  it('streams content in several deltas, then a usage chunk when asked', async () => {
    llm.enqueue({ content: 'The quick brown fox jumps' });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let finishReason: string | null = null;
    let usageTotal: number | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      if (chunk.usage) usageTotal = chunk.usage.total_tokens;
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('The quick brown fox jumps');
    expect(finishReason).toBe('stop');
    expect(usageTotal).toBeGreaterThan(0);
  });

  it('streams tool-call arguments in pieces that the SDK reassembles by index', async () => {
    const longArgs = { city: 'Oslo', units: 'metric', days: 3, note: 'arguments long enough to be split' };
    llm.enqueue({
      content: 'Checking.',
      toolCalls: [
        { name: 'get_weather', arguments: longArgs },
        { name: 'get_time', arguments: { tz: 'CET' } },
      ],
    });
    const stream = client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool] });
    let argumentDeltas = 0;
    stream.on('chunk', (chunk) => {
      argumentDeltas += (chunk.choices[0]?.delta.tool_calls ?? []).filter((call) => call.id === undefined && call.function?.arguments).length;
    });
    const completion = await stream.finalChatCompletion();
    expect(argumentDeltas).toBeGreaterThan(2);
    const message = completion.choices[0]?.message;
    expect(message?.content).toBe('Checking.');
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    const calls = (message?.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
    expect(calls.map((call) => call.function.name)).toEqual(['get_weather', 'get_time']);
    expect(JSON.parse(calls[0]?.function.arguments ?? '')).toEqual(longArgs);
    expect(JSON.parse(calls[1]?.function.arguments ?? '')).toEqual({ tz: 'CET' });
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
  });

  it('surfaces 429 as RateLimitError with the Retry-After header', async () => {
    llm.enqueue({ status: 429, retryAfterSeconds: 7 });
    const error: unknown = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const rateLimit = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateLimit.status).toBe(429);
    expect(rateLimit.headers.get('retry-after')).toBe('7');
    expect(rateLimit.code).toBe('rate_limit_exceeded');
    expect(rateLimit.type).toBe('rate_limit_exceeded');
  });

  it('surfaces 500 as an APIError with status 500 and the scripted message', async () => {
    llm.enqueue({ status: 500, message: 'upstream exploded' });
    const error: unknown = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((error as Error).message).toContain('upstream exploded');
  });

  it('lets the SDK retry a 503 and succeed on the next queued response', async () => {
    const retrying = new OpenAI({ baseURL: llm.baseUrl, apiKey: 'test', maxRetries: 1 });
    llm.enqueue({ status: 503, retryAfterSeconds: 0 }, { content: 'recovered' });
    const completion = await retrying.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.choices[0]?.message.content).toBe('recovered');
    expect(llm.requests).toHaveLength(2);
  });

  it('counts concurrent requests in maxInFlight when latency holds them open', async () => {
    llm.setLatency(100);
    const started = Date.now();
    await Promise.all(Array.from({ length: 5 }, (_, i) => client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: `q${i}` }] })));
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(llm.maxInFlight).toBe(5);
    expect(llm.inFlight).toBe(0);

    llm.resetStats();
    expect(llm.requests).toHaveLength(0);
    expect(llm.maxInFlight).toBe(0);
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'seq' }] });
    expect(llm.maxInFlight).toBe(1);
    expect(llm.requests).toHaveLength(3);
  });

  it('adds per-response delayMs on top of latency', async () => {
    llm.enqueue({ content: 'slow', delayMs: 150 });
    const started = Date.now();
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('a hanging response times out on the client and is no longer in flight afterwards', async () => {
    llm.enqueue({ hang: true });
    const error: unknown = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { timeout: 200 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    await expect.poll(() => llm.inFlight).toBe(0);
    expect(llm.maxInFlight).toBe(1);
  });

  it('records when each request ended: once answered, or when its client went away', async () => {
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'answered' }] });
    const [answered] = llm.requests;
    expect(answered!.endedAt).toBeGreaterThanOrEqual(answered!.receivedAt);

    llm.enqueue({ hang: true });
    const gone = new AbortController();
    const pending = client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'abandoned' }] }, { signal: gone.signal })
      .catch((e: unknown) => e);
    const abandoned = await eventually(() => llm.requests[1], 5_000, 'the abandoned request');
    expect(abandoned.endedAt).toBeUndefined();
    gone.abort();
    await pending;
    await expect.poll(() => abandoned.endedAt).toBeGreaterThanOrEqual(abandoned.receivedAt);
  });

  it('close() cuts off a hanging request instead of waiting for it', async () => {
    llm.enqueue({ hang: true });
    const pending = client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    await expect.poll(() => llm.inFlight).toBe(1);
    await llm.close();
    expect(await pending).toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it('lists a model', async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toContain('scripted');
  });
});
