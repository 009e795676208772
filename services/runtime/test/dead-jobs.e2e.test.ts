import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeJson, serve, type Bus } from '@hermes/bus';
import { contracts, type DeadLetter, type RuntimeJob, type RuntimeResult } from '@hermes/contracts';
import {
  cleanupAll,
  freePort,
  startChildService,
  startNatsServer,
  startScriptedLlm,
  type ChildService,
  type NatsServerHandle,
  type ScriptedLlm,
} from '@hermes/testkit';
import { MODEL, makeJob } from './runtime-fixture.js';
import { connectBus, eventually, storedPayloads, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

// The built runtime (dist/main.js, as a Deployment runs it: its main.ts wiring included) against a
// real nats-server and a scripted model that always answers 503, with RUNTIME_MAX_ATTEMPTS=2.
const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const MAX_ATTEMPTS = 2;

let nats: NatsServerHandle;
let llm: ScriptedLlm;
let bus: Bus;
let runtime: ChildService;
const crashed = makeJob({ goal: 'a job that crashed its runtime every time' });

const results = async () => (await storedPayloads(bus, bus.subjects.streams.runtimeResults)) as RuntimeResult[];
const deadLetters = async () => (await storedPayloads(bus, bus.subjects.streams.deadLetters).catch(() => [])) as DeadLetter[];
const resultOf = (jobId: string) => eventually(async () => (await results()).find((r) => r.job_id === jobId), 20_000, `the result of ${jobId}`);
const askedModelAbout = (goal: string) => llm.requests.some((r) => JSON.stringify(r.body).includes(goal));

beforeAll(async () => {
  [nats, llm] = await Promise.all([startNatsServer(), startScriptedLlm()]);
  llm.setResponder(() => ({ status: 503, message: 'the model is down' }));
  const prefix = uniquePrefix('deadjobs');
  bus = await connectBus(nats.url, prefix, { maxDeliveries: MAX_ATTEMPTS });
  await bus.ensureStreams(['runtimeJobs', 'runtimeResults', 'taskEvents', 'deadLetters']);
  await bus.ensureConsumers(['runtimeJobs']);
  // Memory and toolbus stand-ins: only the model fails.
  serve(bus, contracts.sessionContext, async (req) => ({
    messages: [],
    tokens: 0,
    budget: req.context_limit,
    summary_used: false,
    truncated_tool_results: 0,
    dropped_messages: 0,
  }));
  serve(bus, contracts.toolsList, async () => ({ tools: [] }));
  serve(bus, contracts.sessionLock, async (req) => ({ token: `lock-${req.session_id}`, lease_ms: 30_000 }));
  serve(bus, contracts.sessionRenew, async (req) => ({ token: req.token, lease_ms: 30_000 }));
  serve(bus, contracts.sessionUnlock, async () => ({ released: true }));
  await natsHandles(bus).nc.flush();

  // Two deliveries nobody finished before the runtime starts, as two runtimes that died on it leave.
  await bus.publish(contracts.runtimeJobs, crashed, { msgId: crashed.job_id });
  const raw = await natsHandles(bus).js.consumers.get(bus.subjects.streams.runtimeJobs, bus.subjects.consumers.runtimeJobs);
  for (let i = 0; i < MAX_ATTEMPTS; i++) (await raw.next({ expires: 5_000 }))!.nak();

  const healthPort = await freePort();
  runtime = await startChildService({
    name: 'runtime',
    entry,
    healthPort,
    env: {
      NATS_URL: nats.url,
      HERMES_SUBJECT_PREFIX: prefix,
      HEALTH_PORT: String(healthPort),
      OPENAI_BASE_URL: llm.baseUrl,
      OPENAI_API_KEY: 'test-key',
      HERMES_MODEL_WORKER: MODEL,
      LLM_MAX_RETRIES: '0',
      RUNTIME_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      RUNTIME_MAX_DELIVERIES: String(MAX_ATTEMPTS),
      LOG_LEVEL: 'warn',
      OTEL_SDK_DISABLED: 'true',
    },
  });
}, 60_000);

afterAll(async () => {
  await runtime?.stop(5_000);
  await bus?.drain();
  await llm?.close();
  await cleanupAll();
});

describe('runtime dead letters', () => {
  it('a job that fails retryably on every delivery ends, after RUNTIME_MAX_ATTEMPTS, in a failed result carrying the error', async () => {
    const j = makeJob({ goal: 'a job the model never answers' });
    await bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });

    const result = await resultOf(j.job_id);
    expect(result).toMatchObject({ outcome: 'failed', attempt: MAX_ATTEMPTS, error: { code: 'llm_unavailable', retryable: true } });
    expect(llm.requests.filter((r) => JSON.stringify(r.body).includes(j.goal))).toHaveLength(MAX_ATTEMPTS);
    // The runner reported it on its last attempt, so it was handled, not dropped.
    expect(
      (await deadLetters()).some((d) =>
        Buffer.from(d.payload ?? '', 'base64')
          .toString()
          .includes(j.job_id),
      ),
    ).toBe(false);
  });

  it('a job past its delivery bound is dead-lettered without calling the model, and its subtask fails with the reason', async () => {
    const result = await resultOf(crashed.job_id);

    expect(result).toMatchObject({
      task_id: crashed.task_id,
      subtask_id: 'main',
      outcome: 'failed',
      attempt: MAX_ATTEMPTS + 1,
      error: { code: 'max_deliveries_exceeded', retryable: false },
    });
    expect(await deadLetters()).toContainEqual(
      expect.objectContaining({
        stream: bus.subjects.streams.runtimeJobs,
        stream_seq: 1,
        consumer: bus.subjects.consumers.runtimeJobs,
        deliveries: MAX_ATTEMPTS + 1,
      }),
    );
    expect(askedModelAbout(crashed.goal)).toBe(false);
  });

  it('a job that breaks its contract is dead-lettered at once and still reported failed, as its ids are readable', async () => {
    const broken = { ...makeJob(), model_role: 'oracle' } as unknown as RuntimeJob;
    await natsHandles(bus).js.publish(bus.subjects.runtimeJobs, encodeJson(broken));

    const result = await resultOf(broken.job_id);
    expect(result).toMatchObject({ outcome: 'failed', attempt: 1, error: { code: 'invalid_payload', retryable: false } });
    const letters = await eventually(
      async () => {
        const d = await deadLetters();
        return d.some((x) => x.error.code === 'invalid_payload') ? d : undefined;
      },
      10_000,
      'the dead letter',
    );
    expect(letters.find((x) => x.error.code === 'invalid_payload')).toMatchObject({ deliveries: 1, subject: bus.subjects.runtimeJobs });
  });

  it('a job whose checkpoint is unreadable is dead-lettered at once and reported failed as corrupt_state, without calling the model', async () => {
    const j = makeJob({ goal: 'a job whose checkpoint was corrupted' });
    const key = `job.${j.job_id.replace(/[^A-Za-z0-9_=-]/g, '_')}`;
    await (await bus.kv('checkpoints')).put(key, JSON.stringify({ v: 1, job_id: j.job_id, step: 2, messages: 'lost' }));
    await bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });

    const result = await resultOf(j.job_id);
    expect(result).toMatchObject({
      outcome: 'failed',
      attempt: 1,
      error: { code: 'corrupt_state', retryable: false, details: { record: 'StoredCheckpoint', bucket: bus.subjects.buckets.checkpoints, key } },
    });
    expect(askedModelAbout(j.goal)).toBe(false);
  });
});
