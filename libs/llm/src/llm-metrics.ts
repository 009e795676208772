import type { Attributes, Counter, Histogram } from '@opentelemetry/api';
import { hermesMeter } from '@hermes/telemetry';

/**
 * LLM metrics, named after the OpenTelemetry GenAI conventions where they exist. Created when
 * the client is, so they bind to the MeterProvider that telemetry start-up registered.
 */
export class LlmMetrics {
  private readonly tokens: Histogram;
  private readonly duration: Histogram;
  private readonly permitWait: Histogram;
  private readonly calls: Counter;

  constructor() {
    const m = hermesMeter();
    this.tokens = m.createHistogram('gen_ai.client.token.usage', { unit: '{token}', description: 'tokens per LLM call, by type' });
    this.duration = m.createHistogram('gen_ai.client.operation.duration', { unit: 's', description: 'LLM call duration, permit wait excluded' });
    this.permitWait = m.createHistogram('hermes.llm.permit.wait', { unit: 's', description: 'time waiting for a permit of the global semaphore' });
    this.calls = m.createCounter('hermes.llm.calls', { description: 'LLM call attempts, by outcome' });
  }

  call(o: { model: string; pool: string; seconds: number; usage?: { input_tokens: number; output_tokens: number }; errorType?: string }): void {
    const base: Attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': o.model, 'hermes.llm.pool': o.pool };
    this.duration.record(o.seconds, { ...base, ...(o.errorType ? { 'error.type': o.errorType } : {}) });
    this.calls.add(1, { ...base, outcome: o.errorType ?? 'ok' });
    if (o.usage) {
      this.tokens.record(o.usage.input_tokens, { ...base, 'gen_ai.token.type': 'input' });
      this.tokens.record(o.usage.output_tokens, { ...base, 'gen_ai.token.type': 'output' });
    }
  }

  waited(pool: string, ms: number): void {
    this.permitWait.record(ms / 1000, { 'hermes.llm.pool': pool });
  }
}
