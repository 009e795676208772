import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { JsMsg } from '@nats-io/jetstream';
import { RemoteError, consumeContract, serve, type Bus, type WorkConsumer } from '@hermes/bus';
import {
  contracts,
  taskEventData,
  type RuntimeJob,
  type RuntimeResult,
  type SessionAppendRequest,
  type SessionMessage,
  type SessionReadRequest,
  type ToolsListRequest,
} from '@hermes/contracts';
import { Type } from '@sinclair/typebox';
import { loadConfig } from '@hermes/config';
import { LlmClient, llmSettings, roleEndpoints } from '@hermes/llm';
import { cleanupAll, defaultResponder, startNatsServer, startScriptedLlm, type NatsServerHandle, type ScriptedLlm } from '@hermes/testkit';
import { JobRunner } from '../src/job-runner.js';
import { SYSTEM_PROMPT } from '../src/prompt-builder.js';
import { connectBus, eventually, kinds, silentLogger, storedPayloads, taskEvents, uniquePrefix } from './support.js';

let nats: NatsServerHandle;
let llm: ScriptedLlm;
const buses: Bus[] = [];
const consumers: WorkConsumer[] = [];

const MODEL = 'test-worker';

let jobs = 0;
function job(j: Partial<RuntimeJob> = {}): RuntimeJob {
  const taskId = `t_job${++jobs}`;
  return {
    job_id: `${taskId}-main`,
    task_id: taskId,
    subtask_id: 'main',
    user_id: 'u_alice',
    session_id: 'sess_1',
    goal: 'summarise the incident',
    model_role: 'worker',
    ...j,
  };
}

const sessionMessage = (role: SessionMessage['role'], content: string): SessionMessage => ({
  message_id: `m_${role}_${content.length}`,
  session_id: 'sess_1',
  user_id: 'u_alice',
  role,
  content,
  created_at: '2025-01-01T00:00:00.000Z',
  tokens: 3,
});

interface FixtureOptions {
  maxAttempts?: number;
  /** Register the memory stand-in (default true); false leaves nobody answering memory requests. */
  memory?: boolean;
  history?: SessionMessage[];
}

/**
 * A runtime on streams of its own: the JobRunner with a real LlmClient against the scripted model,
 * and memory and toolbus stand-ins that are real responders on the bus.
 */
async function runtimeFixture(opts: FixtureOptions = {}) {
  const bus = await connectBus(nats.url, uniquePrefix('runtime'), { runtimeAckWaitMs: 2_000 });
  buses.push(bus);
  await bus.ensureStreams(['runtimeJobs', 'runtimeResults', 'taskEvents']);
  await bus.ensureConsumers(['runtimeJobs']);

  const reads: SessionReadRequest[] = [];
  const appends: SessionAppendRequest[] = [];
  const toolLists: ToolsListRequest[] = [];
  if (opts.memory !== false) {
    serve(bus, contracts.sessionRead, async (req) => {
      reads.push(req);
      return { messages: opts.history ?? [] };
    });
    serve(bus, contracts.sessionAppend, async (req) => {
      appends.push(req);
      return { messages: [] };
    });
  }
  serve(bus, contracts.toolsList, async (req) => {
    toolLists.push(req);
    return { tools: [{ name: 'web_search', description: 'search the web', parameters: { type: 'object' } }] };
  });
  await bus.nc.flush();

  // Endpoints resolved from settings exactly as the runtime's main does; no SDK retries, so one call is one attempt.
  const config = loadConfig(Type.Object(llmSettings), {
    service: 'runtime-test',
    env: { OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'test-key', HERMES_MODEL_WORKER: MODEL },
  });
  const client = new LlmClient({ roles: roleEndpoints(config), maxRetries: 0, timeoutMs: 5_000 });
  const maxAttempts = opts.maxAttempts ?? 3;
  const runner = new JobRunner({ bus, llm: client, logger: silentLogger, maxAttempts });
  const consumer = await bus.js.consumers.get(bus.subjects.streams.runtimeJobs, bus.subjects.consumers.runtimeJobs);

  return {
    bus,
    runner,
    reads,
    appends,
    toolLists,
    /** Publishes the job and returns its `delivery`-th delivery (earlier ones are nak'ed, as a failed handler would). */
    async deliver(j: RuntimeJob, delivery = 1): Promise<JsMsg> {
      await bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });
      for (;;) {
        const msg = await consumer.next({ expires: 2_000 });
        if (!msg) throw new Error('the job was not delivered');
        if (msg.info.deliveryCount >= delivery) return msg;
        msg.nak();
      }
    },
    /** Runs the JobRunner as the runtime's consumer does, redelivering quickly after a failure. */
    async consume(): Promise<void> {
      consumers.push(
        await consumeContract(
          bus,
          contracts.runtimeJobs,
          { stream: bus.subjects.streams.runtimeJobs, durable: bus.subjects.consumers.runtimeJobs, retryDelayMs: 50, heartbeatMs: 500 },
          (j, msg) => runner.run(j, msg),
        ),
      );
    },
    results: async () => (await storedPayloads(bus, bus.subjects.streams.runtimeResults)) as RuntimeResult[],
    events: (taskId: string) => taskEvents(bus, taskId),
    pendingJobs: async () => (await bus.jsm.streams.info(bus.subjects.streams.runtimeJobs)).state.messages,
  };
}

/** What a promise rejected with (fails the test when it resolved). */
async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => expect.unreachable('expected the promise to reject'),
    (err: unknown) => err,
  );
}

beforeAll(async () => {
  [nats, llm] = await Promise.all([startNatsServer(), startScriptedLlm()]);
});

beforeEach(() => {
  llm.clearQueue();
  llm.setResponder(defaultResponder);
  llm.resetStats();
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop(1_000)));
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('JobRunner', () => {
  it('a job emits started and step, appends the turn to the session and publishes a succeeded result with output and usage', async () => {
    const f = await runtimeFixture();
    const j = job({ tools: ['web_search'] });
    llm.enqueue({ content: 'the incident was a DNS outage', usage: { prompt_tokens: 42, completion_tokens: 7 } });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);
    await msg.ackAck();

    expect(await f.results()).toEqual([
      {
        job_id: j.job_id,
        task_id: j.task_id,
        subtask_id: 'main',
        attempt: 1,
        outcome: 'succeeded',
        output: 'the incident was a DNS outage',
        usage: { input_tokens: 42, output_tokens: 7 },
        model: MODEL,
      },
    ]);
    const events = await f.events(j.task_id);
    expect(kinds(events)).toEqual(['started', 'step']);
    expect(events.every((e) => e.subject === j.task_id && e.source === 'hermes/runtime')).toBe(true);
    expect(taskEventData(events[0]!, 'started')).toEqual({ task_id: j.task_id, subtask_id: 'main', attempt: 1 });
    expect(taskEventData(events[1]!, 'step')).toMatchObject({
      task_id: j.task_id,
      step: 1,
      kind: 'llm_call',
      model: MODEL,
      usage: { input_tokens: 42, output_tokens: 7 },
      detail: { finish_reason: 'stop', tools_available: 1 },
    });
    expect(f.appends).toEqual([
      {
        user_id: 'u_alice',
        session_id: 'sess_1',
        messages: [
          { role: 'user', content: 'summarise the incident' },
          { role: 'assistant', content: 'the incident was a DNS outage' },
        ],
      },
    ]);
    expect(f.reads).toEqual([{ user_id: 'u_alice', session_id: 'sess_1', limit: 20 }]);
    expect(f.toolLists).toEqual([{ user_id: 'u_alice', allow: ['web_search'] }]);
  });

  it('the LLM request carries the system prompt, the prior session turns and the goal', async () => {
    const f = await runtimeFixture({
      history: [sessionMessage('user', 'what broke last night?'), sessionMessage('assistant', 'the DNS resolver'), sessionMessage('tool', '{"ok":true}')],
    });
    const j = job({ goal: 'write the postmortem' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests).toHaveLength(1);
    const body = llm.requests[0]!.body;
    expect(body.model).toBe(MODEL);
    expect(body.messages?.map((m) => [m.role, m.content])).toEqual([
      ['system', SYSTEM_PROMPT],
      ['user', 'what broke last night?'],
      ['assistant', 'the DNS resolver'],
      ['user', 'write the postmortem'],
    ]);
  });

  it('an LLM 500 with attempts left throws so the job is redelivered, and publishes no result', async () => {
    const f = await runtimeFixture({ maxAttempts: 3 });
    const j = job();
    llm.enqueue({ status: 500, message: 'upstream exploded' });
    const msg = await f.deliver(j);

    const err = await rejectionOf(f.runner.run(j, msg));

    expect(err).toMatchObject({ code: 'llm_unavailable', retryable: true });
    expect(llm.requests).toHaveLength(1);
    expect(await f.results()).toEqual([]);
    expect(f.appends).toEqual([]);
    expect(kinds(await f.events(j.task_id))).toEqual(['started']);
  });

  it('an LLM 500 on the last attempt publishes a failed result with llm_unavailable', async () => {
    const f = await runtimeFixture({ maxAttempts: 2 });
    const j = job();
    llm.enqueue({ status: 500 });
    const msg = await f.deliver(j, 2);
    expect(msg.info.deliveryCount).toBe(2);

    await f.runner.run(j, msg);

    const [result, ...more] = await f.results();
    expect(more).toEqual([]);
    expect(result).toMatchObject({ job_id: j.job_id, outcome: 'failed', attempt: 2, usage: { input_tokens: 0, output_tokens: 0 } });
    expect(result?.error).toMatchObject({ code: 'llm_unavailable', retryable: true, details: { status: 500 } });
    expect(result?.output).toBeUndefined();
    expect(f.appends).toEqual([]);
  });

  it('an LLM 400 fails the job at once with llm_error, not retryable', async () => {
    const f = await runtimeFixture({ maxAttempts: 3 });
    const j = job();
    llm.enqueue({ status: 400, message: 'bad request' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    const results = await f.results();
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ outcome: 'failed', attempt: 1, error: { code: 'llm_error', retryable: false, details: { status: 400 } } });
    expect(llm.requests).toHaveLength(1);
  });

  it('a delivery beyond maxAttempts reports job_attempts_exhausted without calling the LLM', async () => {
    const f = await runtimeFixture({ maxAttempts: 1 });
    const j = job();
    const msg = await f.deliver(j, 2);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([
      { job_id: j.job_id, outcome: 'failed', attempt: 2, error: { code: 'job_attempts_exhausted', retryable: false, details: { max_attempts: 1 } } },
    ]);
    expect(llm.requests).toHaveLength(0);
    expect(f.reads).toEqual([]);
    expect(await f.events(j.task_id)).toEqual([]);
  });

  it('memory not answering with attempts left throws (no_responders) and never calls the LLM', async () => {
    const f = await runtimeFixture({ memory: false, maxAttempts: 3 });
    const j = job();
    const msg = await f.deliver(j);

    const err = await rejectionOf(f.runner.run(j, msg));

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('no_responders');
    expect(llm.requests).toHaveLength(0);
    expect(await f.results()).toEqual([]);
  });

  it('memory not answering on the last attempt publishes a failed result with no_responders', async () => {
    const f = await runtimeFixture({ memory: false, maxAttempts: 1 });
    const j = job();
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([{ outcome: 'failed', attempt: 1, error: { code: 'no_responders', retryable: true } }]);
  });

  it('through the work consumer, a job whose first LLM call fails with 500 is redelivered and succeeds on attempt 2', async () => {
    const f = await runtimeFixture({ maxAttempts: 3 });
    const j = job();
    llm.enqueue({ status: 500 }, { content: 'second time lucky', usage: { prompt_tokens: 5, completion_tokens: 3 } });
    await f.consume();

    await f.bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });

    const [result] = await eventually(async () => {
      const r = await f.results();
      return r.length > 0 ? r : undefined;
    }, 10_000, 'the result');
    expect(result).toMatchObject({ outcome: 'succeeded', attempt: 2, output: 'second time lucky', usage: { input_tokens: 5, output_tokens: 3 } });
    expect(llm.requests).toHaveLength(2);
    const events = await f.events(j.task_id);
    expect(kinds(events)).toEqual(['started', 'started', 'step']);
    expect(events.filter((e) => kinds([e])[0] === 'started').map((e) => taskEventData(e, 'started')?.attempt)).toEqual([1, 2]);
    // The job was acknowledged: nothing is left in the work queue and it is not run a third time.
    await eventually(async () => ((await f.pendingJobs()) === 0 ? true : undefined), 5_000, 'the ack');
    expect(await f.results()).toHaveLength(1);
  });

  it('through the work consumer, a job whose LLM keeps failing ends failed after maxAttempts deliveries', async () => {
    const f = await runtimeFixture({ maxAttempts: 2 });
    const j = job();
    llm.setResponder(() => ({ status: 503 }));
    await f.consume();

    await f.bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });

    const [result] = await eventually(async () => {
      const r = await f.results();
      return r.length > 0 ? r : undefined;
    }, 10_000, 'the result');
    expect(result).toMatchObject({ outcome: 'failed', attempt: 2, error: { code: 'llm_unavailable', details: { status: 503 } } });
    expect(llm.requests).toHaveLength(2);
    await eventually(async () => ((await f.pendingJobs()) === 0 ? true : undefined), 5_000, 'the ack');
  });
});
