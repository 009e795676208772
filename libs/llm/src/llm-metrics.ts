import type { Attributes, Counter, Histogram } from '@opentelemetry/api';
import type { KV } from '@nats-io/kv';
import { readPoolStatus } from '@hermes/semaphore';
import { hermesMeter } from '@hermes/telemetry';

const SECONDS_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304];

/**
 * LLM metrics, named after the OpenTelemetry GenAI conventions where they exist. Created when
 * the client is, so they bind to the MeterProvider that telemetry start-up registered.
 */
export class LlmMetrics {
  private readonly tokens: Histogram;
  private readonly duration: Histogram;
  private readonly permitWait: Histogram;
  private readonly calls: Counter;
  private readonly timeToFirstChunk: Histogram;

  constructor() {
    const m = hermesMeter();
    // Bucket boundaries as the GenAI conventions advise (the SDK's defaults suit milliseconds, not seconds or tokens).
    this.tokens = m.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'tokens per LLM call, by type',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.duration = m.createHistogram('gen_ai.client.operation.duration', {
      unit: 's',
      description: 'LLM call duration, permit wait excluded',
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
    this.permitWait = m.createHistogram('hermes.llm.permit.wait', {
      unit: 's',
      description: 'time waiting for a permit of the global semaphore',
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
    this.calls = m.createCounter('hermes.llm.calls', { description: 'LLM call attempts, by outcome' });
    this.timeToFirstChunk = m.createHistogram('gen_ai.client.operation.time_to_first_chunk', {
      unit: 's',
      description: 'time from sending a streamed LLM call to its first chunk',
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
  }

  firstChunk(o: { model: string; provider: string; pool: string; seconds: number }): void {
    this.timeToFirstChunk.record(o.seconds, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': o.provider,
      'gen_ai.request.model': o.model,
      'hermes.llm.pool': o.pool,
    });
  }

  call(o: {
    model: string;
    provider: string;
    pool: string;
    seconds: number;
    usage?: { input_tokens: number; output_tokens: number };
    usageEstimated?: boolean;
    errorType?: string;
  }): void {
    const base: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': o.provider,
      'gen_ai.request.model': o.model,
      'hermes.llm.pool': o.pool,
    };
    this.duration.record(o.seconds, { ...base, ...(o.errorType ? { 'error.type': o.errorType } : {}) });
    this.calls.add(1, { ...base, outcome: o.errorType ?? 'ok' });
    if (o.usage) {
      // Counted by Hermes' tokenizer, not reported by the server: kept apart so dashboards can tell.
      const counted = o.usageEstimated ? { 'hermes.llm.usage_estimated': true } : {};
      this.tokens.record(o.usage.input_tokens, { ...base, ...counted, 'gen_ai.token.type': 'input' });
      this.tokens.record(o.usage.output_tokens, { ...base, ...counted, 'gen_ai.token.type': 'output' });
    }
  }

  waited(pool: string, ms: number): void {
    this.permitWait.record(ms / 1000, { 'hermes.llm.pool': pool });
  }
}

let poolsObserved = false;

/**
 * Gauges of the global semaphore's pools, read from its KV bucket when metrics are collected (not
 * on the call path): capacity, permits in use, waiters and tokens left. They are cluster-wide
 * figures, reported alike by every process that calls models: aggregate with max, not sum.
 */
export function observePools(kv: KV): void {
  // One set of gauges per process, however many clients it opens (their pools share the bucket).
  if (poolsObserved) return;
  poolsObserved = true;
  const m = hermesMeter();
  const capacity = m.createObservableGauge('hermes.llm.pool.capacity', {
    unit: '{permit}',
    description: 'calls a pool lets run at once, cluster-wide (its current capacity)',
  });
  const inUse = m.createObservableGauge('hermes.llm.pool.in_use', { unit: '{permit}', description: 'permits held right now' });
  const waiters = m.createObservableGauge('hermes.llm.pool.waiters', { unit: '{call}', description: 'calls waiting for a permit' });
  const tokens = m.createObservableGauge('hermes.llm.pool.tokens_available', {
    unit: '{token}',
    description: 'tokens left in the per-minute budget (pools with a TPM only)',
  });
  const backoff = m.createObservableGauge('hermes.llm.pool.backoff', { description: '1 while a pool is paused after 429s or provider failures' });
  m.addBatchObservableCallback(
    async (r) => {
      const pools = await readPoolStatus(kv).catch(() => []);
      for (const p of pools) {
        const attrs = { 'hermes.llm.pool': p.pool };
        r.observe(capacity, p.capacity, attrs);
        r.observe(inUse, p.in_use, attrs);
        r.observe(waiters, p.waiters, attrs);
        if (p.tokens_available !== null) r.observe(tokens, p.tokens_available, attrs);
        r.observe(backoff, p.backoff_until ? 1 : 0, attrs);
      }
    },
    [capacity, inUse, waiters, tokens, backoff],
  );
}
