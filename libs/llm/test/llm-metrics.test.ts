import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type HistogramMetricData,
  type SumMetricData,
} from '@opentelemetry/sdk-metrics';
import { startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';
import { LlmClient, type LlmError } from '../src/index.js';

let llm: ScriptedLlm;
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
const provider = new MeterProvider({ readers: [reader] });

beforeAll(async () => {
  metrics.setGlobalMeterProvider(provider);
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm?.close();
  await provider.shutdown();
  metrics.disable();
});

async function collected() {
  await reader.forceFlush();
  return exporter
    .getMetrics()
    .at(-1)!
    .scopeMetrics.flatMap((s) => s.metrics);
}

describe('LLM metrics', () => {
  it('records tokens by type, call outcomes and permit wait per pool', async () => {
    const worker = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'metric-model' };
    const client = new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0 });
    llm.enqueue({ content: 'hi', usage: { prompt_tokens: 11, completion_tokens: 7 } }, { status: 400 });
    await client.chat({ role: 'worker', messages: [{ role: 'user', content: 'hello' }] });
    await client.chat({ role: 'worker', messages: [{ role: 'user', content: 'again' }] }).catch((e: LlmError) => e);

    const all = await collected();
    const tokens = all.find((m) => m.descriptor.name === 'gen_ai.client.token.usage') as HistogramMetricData;
    const byType = Object.fromEntries(tokens.dataPoints.map((p) => [p.attributes['gen_ai.token.type'], p.value.sum]));
    expect(byType).toEqual({ input: 11, output: 7 });
    expect(tokens.dataPoints[0]!.attributes['gen_ai.request.model']).toBe('metric-model');
    // The scripted endpoint is in no pool with a provider: a generic OpenAI-compatible server.
    expect(tokens.dataPoints[0]!.attributes['gen_ai.provider.name']).toBe('openai_compatible');

    const calls = all.find((m) => m.descriptor.name === 'hermes.llm.calls') as SumMetricData;
    const byOutcome = Object.fromEntries(calls.dataPoints.map((p) => [p.attributes.outcome, p.value]));
    expect(byOutcome).toEqual({ ok: 1, llm_error: 1 });
    expect(calls.dataPoints[0]!.attributes['hermes.llm.pool']).toBe(client.poolFor('worker'));
  });
});
