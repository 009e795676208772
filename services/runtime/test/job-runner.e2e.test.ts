import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RemoteError, ReplyError } from '@hermes/bus';
import { contracts, taskEventData, wireError, type SessionMessage } from '@hermes/contracts';
import { cleanupAll, defaultResponder, startNatsServer, startScriptedLlm, type NatsServerHandle, type ScriptedLlm } from '@hermes/testkit';
import { systemPrompt } from '../src/prompt-builder.js';
import { toolReserveTokens } from '../src/tool-reserve.js';
import {
  MODEL,
  makeJob as job,
  okReply,
  toolDefinition,
  rejectionOf,
  runtimeFixture as startFixture,
  type FixtureOptions,
  type RuntimeFixture,
} from './runtime-fixture.js';
import { eventually, kinds } from './support.js';

let nats: NatsServerHandle;
let llm: ScriptedLlm;
const fixtures: RuntimeFixture[] = [];

async function runtimeFixture(opts: FixtureOptions = {}): Promise<RuntimeFixture> {
  const f = await startFixture(nats.url, llm, opts);
  fixtures.push(f);
  return f;
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

beforeAll(async () => {
  [nats, llm] = await Promise.all([startNatsServer(), startScriptedLlm()]);
});

beforeEach(() => {
  llm.clearQueue();
  llm.setResponder(defaultResponder);
  llm.resetStats();
});

afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.close()));
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
    expect(events.every((e) => e.subject === j.task_id && /^urn:hermes:[A-Za-z0-9_-]+\/runtime$/.test(e.source))).toBe(true);
    expect(taskEventData(events[0]!, 'started')).toEqual({ task_id: j.task_id, subtask_id: 'main', attempt: 1 });
    expect(taskEventData(events[1]!, 'step')).toMatchObject({
      task_id: j.task_id,
      step: 1,
      kind: 'llm_call',
      model: MODEL,
      usage: { input_tokens: 42, output_tokens: 7 },
      detail: { finish_reason: 'stop', tool_calls: 0 },
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
    expect(f.reads).toEqual([
      {
        user_id: 'u_alice',
        session_id: 'sess_1',
        model: MODEL,
        context_limit: 128_000,
        reserve_output: 4096,
        reserve_tools: toolReserveTokens(j, [toolDefinition('web_search')], MODEL),
      },
    ]);
    expect(f.toolLists).toEqual([{ user_id: 'u_alice', roles: ['user'], allow: ['web_search'] }]);
    expect(f.toolCalls).toEqual([]);
  });

  it('asks for its tool list without waiting for its session context, and reads the context once', async () => {
    const f = await runtimeFixture({ sessionContextDelayMs: 400 });
    const j = job();
    llm.enqueue({ content: 'done' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'done' }]);
    const context = f.arrivals.find((a) => a.request === 'sessionContext')!;
    const tools = f.arrivals.find((a) => a.request === 'toolsList')!;
    expect(f.arrivals.map((a) => a.request).sort()).toEqual(['sessionContext', 'toolsList']);
    // Asked in sequence, the tool list would come only once the context had been answered.
    expect(tools.at).toBeLessThan(context.at + 400);
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
      ['system', systemPrompt(j, true)],
      ['user', 'what broke last night?'],
      ['assistant', 'the DNS resolver'],
      ['user', 'write the postmortem'],
    ]);
    // The toolbus's tools, then the runtime's own ask_user (no allow-list leaves it out).
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'web_search', description: 'the web_search tool', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: expect.objectContaining({ name: 'ask_user' }) },
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

  it('a delivery beyond maxAttempts still runs the job: earlier deliveries that failed nothing (followed by a running loop, left to another holder, a runtime that died) are no attempts', async () => {
    const f = await runtimeFixture({ maxAttempts: 1 });
    const j = job();
    llm.enqueue({ content: 'done after a pause and a crash' });
    const msg = await f.deliver(j, 3);
    expect(msg.info.deliveryCount).toBe(3);

    expect(await f.runner.run(j, msg)).toBe('done');

    expect(await f.results()).toMatchObject([{ job_id: j.job_id, outcome: 'succeeded', attempt: 3, output: 'done after a pause and a crash' }]);
    expect(llm.requests).toHaveLength(1);
  });

  it('a retryable failure on a delivery beyond maxAttempts fails the job with its error, not another redelivery', async () => {
    const f = await runtimeFixture({ maxAttempts: 1 });
    const j = job();
    llm.enqueue({ status: 500 });
    const msg = await f.deliver(j, 3);

    expect(await f.runner.run(j, msg)).toBe('done');

    expect(await f.results()).toMatchObject([{ job_id: j.job_id, outcome: 'failed', attempt: 3, error: { code: 'llm_unavailable', retryable: true } }]);
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

  it('memory not answering, even on the last attempt, is not a failure of the job: the error goes to the work consumer, which waits the outage out', async () => {
    const f = await runtimeFixture({ memory: false, maxAttempts: 1 });
    const j = job();
    const msg = await f.deliver(j);

    const err = await rejectionOf(f.runner.run(j, msg));

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('no_responders');
    expect(await f.results()).toEqual([]);
  });

  it('the opening context starts with the background long-term memory recalled for the goal', async () => {
    const background =
      'Background: what you remember about this user from earlier conversations.\n- (2026-11-01, preference, confidence 0.90) The user wants summaries as bullet points.';
    const f = await runtimeFixture({ onRecall: async () => ({ memories: [], background }) });
    const j = job();
    await f.runner.run(j, await f.deliver(j));

    expect(f.recalls).toEqual([{ user_id: j.user_id, query: j.goal, k: 5 }]);
    const messages = llm.requests[0]?.body.messages;
    expect(messages?.[0]).toEqual({ role: 'system', content: systemPrompt(j, true) });
    expect(messages?.[1]).toEqual({ role: 'system', content: background });
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded' }]);
  });

  it('a failing recall does not fail the job: it starts without background', async () => {
    const f = await runtimeFixture({
      onRecall: async () => {
        throw new ReplyError(wireError('unavailable', 'the long-term memory store is unavailable; retry later'));
      },
    });
    const j = job();
    await f.runner.run(j, await f.deliver(j));

    expect(f.recalls).toHaveLength(1);
    expect(llm.requests[0]?.body.messages?.filter((m) => m.role === 'system')).toHaveLength(1);
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'Scripted answer: summarise the incident' }]);
  });

  it('with no tools offered, the model gets the tool-less system prompt and no tool definitions', async () => {
    const f = await runtimeFixture({ tools: [] });
    const j = job();
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    const body = llm.requests[0]?.body;
    expect(body?.messages?.[0]).toEqual({ role: 'system', content: systemPrompt(j, false) });
    expect(systemPrompt(j, false)).not.toBe(systemPrompt(j, true));
    expect(body?.tools).toBeUndefined();
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'Scripted answer: summarise the incident' }]);
  });

  it('a prompt larger than the token budget fails with budget_exceeded before any LLM call', async () => {
    const f = await runtimeFixture();
    const j = job({ budget: { max_tokens: 5 } });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([
      {
        outcome: 'failed',
        attempt: 1,
        usage: { input_tokens: 0, output_tokens: 0 },
        error: { code: 'budget_exceeded', retryable: false, details: { max_tokens: 5 } },
      },
    ]);
    expect(llm.requests).toHaveLength(0);
    expect(f.appends).toEqual([]);
  });

  it('a job redelivered after its final answer was reached writes that answer to the session without asking the model again', async () => {
    let appendFailures = 1;
    const f = await runtimeFixture({
      onSessionAppend: async () => {
        if (appendFailures-- > 0) throw new Error('redis went away');
      },
    });
    const j = job();
    llm.enqueue({ content: 'the first and only answer', usage: { prompt_tokens: 11, completion_tokens: 4 } });
    const first = await f.deliver(j);

    expect(await rejectionOf(f.runner.run(j, first))).toMatchObject({ code: 'internal' });
    expect(await f.results()).toEqual([]);
    const second = await f.redeliver(first);
    await f.runner.run(j, second);

    expect(llm.requests).toHaveLength(1);
    expect(await f.results()).toMatchObject([
      { outcome: 'succeeded', attempt: 2, output: 'the first and only answer', usage: { input_tokens: 11, output_tokens: 4 }, model: MODEL },
    ]);
    expect(f.appends.map((a) => a.messages.at(-1)?.content)).toEqual(['the first and only answer']);
  });

  it('a runtime whose job was taken over while the model answered neither writes the session nor reports', async () => {
    const f = await runtimeFixture();
    const other = await f.otherRuntime();
    const j = job();
    llm.setResponder(async () => {
      // Another runtime got the redelivered job and checkpointed it while this one waited on the model.
      await other.load(j.job_id);
      await other.save({
        v: 1,
        job_id: j.job_id,
        step: 0,
        messages: [{ role: 'user', content: 'taken over' }],
        usage: { input_tokens: 0, output_tokens: 0 },
        calls: [],
        pending: false,
      });
      return { content: 'a stale answer' };
    });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests).toHaveLength(1);
    expect(f.appends).toEqual([]);
    expect(await f.results()).toEqual([]);
    expect((await other.load(j.job_id))?.messages).toEqual([{ role: 'user', content: 'taken over' }]);
  });

  it('a redelivery that lands in the process still running the job runs no second loop and ends as that run ends', async () => {
    const f = await runtimeFixture();
    const j = job();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    llm.setResponder(async () => {
      await gate;
      return { content: 'answered once' };
    });
    const first = await f.deliver(j);
    const running = f.runner.run(j, first);
    await eventually(() => llm.requests.length === 1);
    // As after a pause longer than the ack wait: JetStream hands the job out again, here.
    const second = await f.redeliver(first);
    expect(second.info.deliveryCount).toBe(2);
    const following = f.runner.run(j, second);
    await new Promise((r) => setTimeout(r, 300));
    release();

    expect(await Promise.all([running, following])).toEqual(['done', 'done']);
    expect(llm.requests).toHaveLength(1);
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'answered once' }]);
  });

  it('through the work consumer, a delivery that lost its checkpoint to another runtime does not ack the job away: once the holder goes quiet it is delivered again and finishes', async () => {
    const j = job();
    let takenOver = false;
    const f = await runtimeFixture({
      onToolCall: async (req) => {
        if (!takenOver) {
          // Another runtime got the job (its delivery replaced this one) and checkpointed it; it then dies.
          takenOver = true;
          const other = await f.otherRuntime();
          const cp = await other.load(j.job_id);
          if (!cp) throw new Error('no checkpoint to take over');
          await other.save({ ...cp });
        }
        return okReply(req, { hits: 1 });
      },
    });
    llm.enqueue({ toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] }, { content: 'stale answer' }, { content: 'the answer after the takeover' });
    await f.bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });
    await f.consume();

    // Generous: the job comes back only after the fixture's 5 s ack wait.
    await eventually(async () => (await f.results()).length === 1, 20_000, 'the redelivered job to report');
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', attempt: 2, output: 'the answer after the takeover' }]);
    expect(await f.pendingJobs()).toBe(0);
  });

  it('through the work consumer, a job whose first LLM call fails with 500 is redelivered and succeeds on attempt 2', async () => {
    const f = await runtimeFixture({ maxAttempts: 3 });
    const j = job();
    llm.enqueue({ status: 500 }, { content: 'second time lucky', usage: { prompt_tokens: 5, completion_tokens: 3 } });
    await f.consume();

    await f.bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });

    const [result] = await eventually(
      async () => {
        const r = await f.results();
        return r.length > 0 ? r : undefined;
      },
      10_000,
      'the result',
    );
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

    const [result] = await eventually(
      async () => {
        const r = await f.results();
        return r.length > 0 ? r : undefined;
      },
      10_000,
      'the result',
    );
    expect(result).toMatchObject({ outcome: 'failed', attempt: 2, error: { code: 'llm_unavailable', details: { status: 503 } } });
    expect(llm.requests).toHaveLength(2);
    await eventually(async () => ((await f.pendingJobs()) === 0 ? true : undefined), 5_000, 'the ack');
  });
});
