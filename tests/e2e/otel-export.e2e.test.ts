import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_EMBEDDINGS_DIMENSION_COUNT,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_SERVICE_INSTANCE_ID,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS,
  METRIC_GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK,
} from '@opentelemetry/semantic-conventions/incubating';
import { LlmClient, PoolResolver } from '@hermes/llm';
import { startTelemetry, TelemetryConfigError, type TelemetryHandle } from '@hermes/telemetry';
import { cleanupAll, freePort, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';
import { startOtlpGrpcReceiver, startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

// Telemetry as a service starts it, in this process, exporting to a real OTLP/HTTP receiver in
// both encodings and to an OTLP/gRPC one; a vLLM-profile pool sends temperature and max_tokens;
// the model is scripted.
let llm: ScriptedLlm;
let receiver: OtlpReceiver;
let grpcReceiver: OtlpReceiver;
let telemetry: TelemetryHandle | undefined;

beforeAll(async () => {
  llm = await startScriptedLlm({ latencyMs: 20 });
  receiver = await startOtlpReceiver();
  grpcReceiver = await startOtlpGrpcReceiver();
});

afterEach(async () => {
  await telemetry?.shutdown();
  telemetry = undefined;
});

afterAll(async () => {
  await receiver?.close();
  await grpcReceiver?.close();
  await cleanupAll();
});

function client(): LlmClient {
  const worker = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'qwen3-8b' };
  const embedder = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'bge-small' };
  const pools = new PoolResolver([{ name: 'vllm-main', capacity: 4, provider: 'vllm', params: { worker: { temperature: 0.3, max_tokens: 256 } } }], {
    capacity: 4,
  });
  return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder }, pools });
}

const RESOURCE = 'deployment.environment.name=staging,hermes.team=search%2Fml,service.name=overridden-by-otel-service-name';

describe.each([
  ['http/protobuf', 'application/x-protobuf'],
  ['http/json', 'application/json'],
  ['grpc', 'application/grpc'],
])('OTLP export over %s', (protocol, contentType) => {
  it('chat and embeddings spans carry the GenAI attributes, and the resource OTEL_RESOURCE_ATTRIBUTES, service.version and service.instance.id', async () => {
    const service = `otel-probe-${protocol.replace('/', '-')}`;
    const rx = protocol === 'grpc' ? grpcReceiver : receiver;
    telemetry = await startTelemetry({
      service,
      version: '9.9.9',
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_RESOURCE_ATTRIBUTES: RESOURCE,
        OTEL_SERVICE_NAME: service,
        OTEL_METRICS_EXPORTER: 'none',
      },
    });
    const c = client();
    llm.enqueue({ content: 'streamed answer' });
    const deltas: string[] = [];
    await c.chat({ role: 'worker', messages: [{ role: 'user', content: 'hi' }], onDelta: (t) => deltas.push(t) });
    const vectors = await c.embed(['one text', 'another text']);
    await telemetry.shutdown();

    expect(deltas.join('')).toBe('streamed answer');
    expect(rx.contentTypes).toContain(contentType);
    const mine = rx.spans.filter((s) => s.service === service);
    const chat = mine.find((s) => s.name === 'chat qwen3-8b');
    expect(chat?.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [ATTR_GEN_AI_PROVIDER_NAME]: 'vllm',
      [ATTR_SERVER_ADDRESS]: '127.0.0.1',
      [ATTR_SERVER_PORT]: llm.port,
      [ATTR_GEN_AI_REQUEST_TEMPERATURE]: 0.3,
      [ATTR_GEN_AI_REQUEST_MAX_TOKENS]: 256,
    });
    // The id the server gave its completion.
    expect(chat?.attributes[ATTR_GEN_AI_RESPONSE_ID]).toMatch(/^chatcmpl-/);
    const firstChunk = chat?.events.find((e) => e.name === 'gen_ai.first_chunk');
    expect(firstChunk?.attributes['hermes.llm.time_to_first_chunk_s']).toBeGreaterThan(0);
    expect(chat?.attributes['hermes.llm.time_to_first_chunk_s']).toBe(firstChunk?.attributes['hermes.llm.time_to_first_chunk_s']);

    const embeddings = mine.find((s) => s.name === 'embeddings bge-small');
    expect(embeddings?.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS,
      [ATTR_GEN_AI_REQUEST_MODEL]: 'bge-small',
      [ATTR_SERVER_PORT]: llm.port,
      [ATTR_GEN_AI_EMBEDDINGS_DIMENSION_COUNT]: vectors[0]!.length,
    });
    expect(embeddings?.attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBeGreaterThan(0);
    expect(embeddings?.kind).toBe(3); // SpanKind.CLIENT, as OTLP numbers it

    expect(chat?.resource).toMatchObject({
      [ATTR_SERVICE_NAME]: service,
      [ATTR_SERVICE_VERSION]: '9.9.9',
      'deployment.environment.name': 'staging',
      // Percent-decoded, as the spec says.
      'hermes.team': 'search/ml',
    });
    expect(chat?.resource[ATTR_SERVICE_INSTANCE_ID]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('time to first chunk as a metric', () => {
  it('records gen_ai.client.operation.time_to_first_chunk for streamed calls, with the provider', async () => {
    const port = await freePort();
    telemetry = await startTelemetry({ service: 'otel-metrics-probe', env: { OTEL_METRICS_EXPORTER: 'none' }, metricsPort: port });
    const c = client();
    llm.enqueue({ content: 'streamed' });
    await c.chat({ role: 'worker', messages: [{ role: 'user', content: 'hi' }], onDelta: () => undefined });
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const name = METRIC_GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK.replaceAll('.', '_');
    expect(text).toMatch(new RegExp(`^${name}\\w*_count\\{[^}]*gen_ai_provider_name="vllm"[^}]*\\} 1$`, 'm'));
  });
});

describe('OTEL_EXPORTER_OTLP_PROTOCOL', () => {
  it('refuses a protocol it does not speak with an error naming the setting, instead of exporting where nobody listens', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/thrift' };
    const err = await startTelemetry({ service: 'otel-thrift-probe', env }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelemetryConfigError);
    expect(err).toMatchObject({ setting: 'OTEL_EXPORTER_OTLP_PROTOCOL', code: 'invalid_telemetry_setting' });
    const traces = await startTelemetry({
      service: 'otel-thrift-probe',
      env: { ...env, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf', OTEL_METRICS_EXPORTER: 'none' },
    });
    // The signal's own setting wins over the general one.
    expect(traces.exporting).toBe(true);
    telemetry = traces;
  });
});
