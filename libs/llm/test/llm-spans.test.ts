import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { installPropagation, withConversation } from '@hermes/telemetry';
import { startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';
import { LlmClient } from '../src/index.js';

let llm: ScriptedLlm;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  installPropagation();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm?.close();
  trace.disable();
});

function client(captureContent: boolean) {
  const worker = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'span-model' };
  return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0, captureContent });
}

const messages = [
  { role: 'system' as const, content: 'you are terse' },
  { role: 'user' as const, content: 'secret question' },
];

describe('chat spans', () => {
  it('follow the GenAI conventions, take the conversation from the context and record no content by default', async () => {
    exporter.reset();
    llm.enqueue({ content: 'secret answer', usage: { prompt_tokens: 9, completion_tokens: 4 } });

    await context.with(withConversation(context.active(), 'sess_1'), () => client(false).chat({ role: 'worker', messages }));

    const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'chat span-model');
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      // An endpoint in no pool with a provider, and not OpenAI's or Azure's host, is a generic one.
      'gen_ai.provider.name': 'openai_compatible',
      'gen_ai.request.model': 'span-model',
      'server.address': '127.0.0.1',
      'server.port': llm.port,
      'gen_ai.usage.input_tokens': 9,
      'gen_ai.usage.output_tokens': 4,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.conversation.id': 'sess_1',
    });
    expect(JSON.stringify(span?.attributes)).not.toMatch(/secret/);
  });

  it('with content capture, record the prompt, system instructions and answer', async () => {
    exporter.reset();
    llm.enqueue({ content: 'secret answer' });

    await client(true).chat({ role: 'worker', messages });

    const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'chat span-model');
    expect(JSON.parse(String(span?.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', content: 'secret question' }]);
    expect(JSON.parse(String(span?.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'you are terse' }]);
    expect(JSON.parse(String(span?.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'secret answer' }], finish_reason: 'stop' },
    ]);
    expect(span?.attributes['gen_ai.conversation.id']).toBeUndefined();
  });
});
