import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contracts, toolCallIdFor, type ToolCallReply } from '@hermes/contracts';
import {
  cleanupAll,
  defaultResponder,
  eventually,
  startNatsServer,
  startScriptedLlm,
  type ChatMessage,
  type NatsServerHandle,
  type ScriptedLlm,
} from '@hermes/testkit';
import {
  MODEL,
  makeJob as job,
  okReply,
  rejectionOf,
  runtimeFixture as startFixture,
  toolDefinition,
  type FixtureOptions,
  type RuntimeFixture,
} from './runtime-fixture.js';
import { kinds } from './support.js';

let nats: NatsServerHandle;
let llm: ScriptedLlm;
const fixtures: RuntimeFixture[] = [];

async function runtimeFixture(opts: FixtureOptions = {}): Promise<RuntimeFixture> {
  const f = await startFixture(nats.url, llm, opts);
  fixtures.push(f);
  return f;
}

/** The messages the model was sent in its `n`-th request (0-based). */
function sentMessages(n: number): ChatMessage[] {
  const body = llm.requests[n]?.body;
  if (!body?.messages) throw new Error(`the model got no request #${n}`);
  return body.messages;
}

/** The parsed content of a tool message. */
function toolContent(m: ChatMessage | undefined): unknown {
  if (m?.role !== 'tool' || typeof m.content !== 'string') throw new Error(`not a tool message: ${JSON.stringify(m)}`);
  return JSON.parse(m.content);
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
  await Promise.all(fixtures.map((f) => f.close()));
  await cleanupAll();
});

describe('the agent loop', () => {
  it("sends side-effect-free calls alongside their turn's checkpoint, and calls with side effects only once it is stored", async () => {
    const seen: { tool: string; turnStored: boolean }[] = [];
    // Opened once the fixture exists; read by its toolbus stand-in, which is defined before.
    const checkpoints: { kv?: Awaited<ReturnType<RuntimeFixture['bus']['kv']>> } = {};
    const j = job();
    const f = await runtimeFixture({
      tools: [{ ...toolDefinition('lookup'), idempotent: true }, toolDefinition('send_mail')],
      checkpointDelayMs: 300,
      onToolCall: async (req) => {
        const cp = (await checkpoints.kv!.get(`job.${j.job_id}`))?.json<{ step: number; pending?: boolean }>();
        seen.push({ tool: req.tool, turnStored: cp?.step === req.step && cp.pending === true });
        return okReply(req, { from: req.tool });
      },
    });
    checkpoints.kv = await f.bus.kv('checkpoints');
    llm.enqueue(
      {
        toolCalls: [
          { id: 'call_a', name: 'lookup', arguments: { q: 'mx records' } },
          { id: 'call_b', name: 'send_mail', arguments: { to: 'ops' } },
        ],
      },
      { content: 'done' },
    );
    await f.runner.run(j, await f.deliver(j));
    expect(seen).toEqual([
      { tool: 'lookup', turnStored: false },
      { tool: 'send_mail', turnStored: true },
    ]);
    expect(toolContent(sentMessages(1).at(-2))).toEqual({ ok: true, result: { from: 'lookup' } });
    expect(toolContent(sentMessages(1).at(-1))).toEqual({ ok: true, result: { from: 'send_mail' } });
    expect((await f.results()).at(-1)).toMatchObject({ job_id: j.job_id, output: 'done' });
  });

  it('runs the two tool calls of one turn concurrently and returns their results in call order, then answers', async () => {
    const f = await runtimeFixture({
      tools: [toolDefinition('web_search'), toolDefinition('read_file')],
      // The first call finishes last, so completion order differs from call order.
      onToolCall: async (req) => {
        await sleep(req.call_index === 0 ? 300 : 50);
        return okReply(req, { from: req.tool });
      },
    });
    const j = job();
    llm.enqueue(
      {
        toolCalls: [
          { id: 'call_a', name: 'web_search', arguments: { q: 'dns outage' } },
          { id: 'call_b', name: 'read_file', arguments: { path: '/var/log/dns' } },
        ],
        usage: { prompt_tokens: 30, completion_tokens: 10 },
      },
      { content: 'final', usage: { prompt_tokens: 50, completion_tokens: 5 } },
    );
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'final', usage: { input_tokens: 80, output_tokens: 15 }, model: MODEL }]);
    expect(f.maxToolCallsInFlight).toBe(2);
    const key = (index: number) => `${j.task_id}:main:1:${index}`;
    expect([...f.toolCalls].sort((a, b) => a.req.call_index - b.req.call_index).map((c) => c.req)).toEqual([
      {
        idempotency_key: key(0),
        task_id: j.task_id,
        subtask_id: 'main',
        step: 1,
        call_index: 0,
        tool_call_id: 'call_a',
        user_id: 'u_alice',
        roles: ['user'],
        tool: 'web_search',
        arguments: '{"q":"dns outage"}',
      },
      {
        idempotency_key: key(1),
        task_id: j.task_id,
        subtask_id: 'main',
        step: 1,
        call_index: 1,
        tool_call_id: 'call_b',
        user_id: 'u_alice',
        roles: ['user'],
        tool: 'read_file',
        arguments: '{"path":"/var/log/dns"}',
      },
    ]);

    expect(llm.requests).toHaveLength(2);
    // The toolbus's two tools and the runtime's own ask_user.
    expect((llm.requests[0]?.body.tools ?? []).map((t) => (t as { function: { name: string } }).function.name)).toContain('ask_user');
    expect(llm.requests[0]?.body.tools).toHaveLength(3);
    const second = sentMessages(1);
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(second[2]?.tool_calls?.map((c) => [c.id, c.function.name])).toEqual([
      ['call_a', 'web_search'],
      ['call_b', 'read_file'],
    ]);
    expect(second.slice(3).map((m) => [m.tool_call_id, toolContent(m)])).toEqual([
      ['call_a', { ok: true, result: { from: 'web_search' } }],
      ['call_b', { ok: true, result: { from: 'read_file' } }],
    ]);

    const events = await f.events(j.task_id);
    const ids = events.map((e) => e.id);
    const step = (s: string) => `${j.job_id}:step:${s}`;
    expect(ids[0]).toBe(`${j.job_id}:started:1`);
    expect(ids[1]).toBe(step('1:llm'));
    expect(new Set(ids.slice(2, 6))).toEqual(new Set([step('1:call:0'), step('1:call:1'), step('1:result:0'), step('1:result:1')]));
    expect(ids.slice(6)).toEqual([step('2:llm')]);
    const data = await f.steps(j.task_id);
    expect(data.map((d) => d.step)).toEqual([1, 1, 1, 1, 1, 2]);
    expect(data.map((d) => d.kind).sort()).toEqual(['llm_call', 'llm_call', 'tool_call', 'tool_call', 'tool_result', 'tool_result']);
    expect(data[0]).toMatchObject({ model: MODEL, usage: { input_tokens: 30, output_tokens: 10 }, detail: { finish_reason: 'tool_calls', tool_calls: 2 } });
    const toolEvents = data.filter((d) => d.kind === 'tool_call').sort((a, b) => String(a.detail?.call_id).localeCompare(String(b.detail?.call_id)));
    expect(toolEvents.map((d) => d.detail)).toEqual([
      // The same call id the toolbus, approvals and the audit use.
      { call_id: toolCallIdFor(key(0)), tool: 'web_search', arguments: '{"q":"dns outage"}' },
      { call_id: toolCallIdFor(key(1)), tool: 'read_file', arguments: '{"path":"/var/log/dns"}' },
    ]);
    const resultEvents = data.filter((d) => d.kind === 'tool_result').sort((a, b) => String(a.detail?.call_id).localeCompare(String(b.detail?.call_id)));
    expect(resultEvents.map((d) => d.detail)).toEqual([
      { call_id: `call-${key(0)}`, tool: 'web_search', status: 'ok', result: '{"from":"web_search"}' },
      { call_id: `call-${key(1)}`, tool: 'read_file', status: 'ok', result: '{"from":"read_file"}' },
    ]);
    // Only the goal and the final answer go to the session, not the tool turns.
    expect(f.appends.map((a) => a.messages)).toEqual([
      [
        { role: 'user', content: 'summarise the incident' },
        { role: 'assistant', content: 'final' },
      ],
    ]);
  });

  it('feeds a tool error back to the model with its issues and a hint, and the loop goes on', async () => {
    const invalid: ToolCallReply['error'] = {
      code: 'invalid_arguments',
      message: 'the arguments do not match the schema of web_search',
      retryable: false,
      issues: [{ path: '/query', message: 'is required', expected: 'string' }],
    };
    const f = await runtimeFixture({
      onToolCall: async (req) => {
        const args = JSON.parse(req.arguments) as { query?: string };
        return args.query === undefined ? { call_id: `call-${req.idempotency_key}`, status: 'error', error: invalid } : okReply(req, { hits: 3 });
      },
    });
    const j = job();
    llm.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'web_search', arguments: { q: 'dns' } }] },
      { toolCalls: [{ id: 'call_2', name: 'web_search', arguments: { query: 'dns' } }] },
      { content: 'three hits' },
    );
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests).toHaveLength(3);
    const afterError = sentMessages(1).at(-1);
    expect(afterError?.tool_call_id).toBe('call_1');
    expect(toolContent(afterError)).toEqual({ ok: false, error: invalid, hint: expect.stringContaining('Fix the arguments') });
    const afterFix = sentMessages(2).at(-1);
    expect([afterFix?.tool_call_id, toolContent(afterFix)]).toEqual(['call_2', { ok: true, result: { hits: 3 } }]);
    expect(f.toolCalls.map((c) => c.req.idempotency_key)).toEqual([`${j.task_id}:main:1:0`, `${j.task_id}:main:2:0`]);
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'three hits' }]);
    const results = (await f.steps(j.task_id)).filter((d) => d.kind === 'tool_result');
    expect(results.map((d) => [d.step, d.detail?.status, d.detail?.error])).toEqual([
      [1, 'error', 'invalid_arguments'],
      [2, 'ok', undefined],
    ]);
  });

  it('stops with loop_detected when the model repeats one call (arguments in any key order), without running the repeat', async () => {
    const f = await runtimeFixture({ maxRepeats: 2 });
    const j = job();
    llm.enqueue(
      { toolCalls: [{ name: 'web_search', arguments: { q: 'dns', page: 1 } }], usage: { prompt_tokens: 10, completion_tokens: 1 } },
      { toolCalls: [{ name: 'web_search', arguments: { page: 1, q: 'dns' } }], usage: { prompt_tokens: 10, completion_tokens: 1 } },
      { toolCalls: [{ name: 'web_search', arguments: '{ "q": "dns", "page": 1 }' }], usage: { prompt_tokens: 10, completion_tokens: 1 } },
      { content: 'never asked' },
    );
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests).toHaveLength(3);
    expect(llm.queued).toBe(1);
    expect(f.toolCalls.map((c) => c.req.step)).toEqual([1, 2]);
    const [result, ...more] = await f.results();
    expect(more).toEqual([]);
    expect(result).toMatchObject({ outcome: 'failed', usage: { input_tokens: 30, output_tokens: 3 } });
    expect(result?.error).toMatchObject({
      code: 'loop_detected',
      retryable: false,
      details: { tool: 'web_search', arguments: '{"page":1,"q":"dns"}', step: 3, hint: expect.stringContaining('repeating') },
    });
    expect(f.appends).toEqual([]);
  });

  it('two identical calls are allowed under maxRepeats 2 when different calls come between', async () => {
    const f = await runtimeFixture({ maxRepeats: 2 });
    const j = job();
    llm.enqueue(
      { toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] },
      { toolCalls: [{ name: 'web_search', arguments: { q: 'tls' } }] },
      { toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] },
      { content: 'done' },
    );
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(f.toolCalls).toHaveLength(3);
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'done' }]);
  });

  it("the task's budget.max_steps overrides the runtime default and stops with max_steps_exceeded", async () => {
    const f = await runtimeFixture({ maxSteps: 1 });
    const j = job({ budget: { max_steps: 2 } });
    llm.enqueue(
      { toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: '/etc/resolv.conf' } }] },
      { content: 'too late' },
    );
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests).toHaveLength(2);
    const [result] = await f.results();
    expect(result).toMatchObject({ outcome: 'failed', error: { code: 'max_steps_exceeded', retryable: false } });
    expect(result?.error?.details).toEqual({ steps: 2, tool_calls: 2, tools_used: ['web_search', 'read_file'], last_assistant_message: null });
    // The last turn's call would feed a model that is not asked again: it is not run.
    expect(f.toolCalls.map((c) => c.req.tool)).toEqual(['web_search']);
    expect(f.appends).toEqual([]);
  });

  it('without a task budget the runtime default max_steps applies', async () => {
    const f = await runtimeFixture({ maxSteps: 1 });
    const j = job();
    llm.enqueue({ toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] }, { content: 'too late' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests).toHaveLength(1);
    expect(await f.results()).toMatchObject([{ outcome: 'failed', error: { code: 'max_steps_exceeded', details: { steps: 1, tools_used: ['web_search'] } } }]);
  });

  it('stops with budget_exceeded before step 2 when step 1 used up budget.max_tokens', async () => {
    const f = await runtimeFixture();
    const j = job({ budget: { max_tokens: 50 } });
    llm.enqueue(
      { toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }], usage: { prompt_tokens: 40, completion_tokens: 20 } },
      { content: 'over budget' },
    );
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests).toHaveLength(1);
    expect(await f.results()).toMatchObject([
      {
        outcome: 'failed',
        usage: { input_tokens: 40, output_tokens: 20 },
        error: { code: 'budget_exceeded', retryable: false, details: { used_tokens: 60, max_tokens: 50, steps: 1 } },
      },
    ]);
    expect(f.toolCalls).toEqual([]);
  });

  it('a redelivered job resumes at its checkpoint: step 1 is not asked again and its tool call is re-sent with the same key', async () => {
    const executed = new Map<string, number>();
    const f = await runtimeFixture({
      toolRequestTimeoutMs: 300,
      onToolCall: async (req) => {
        const runs = executed.get(req.idempotency_key) ?? 0;
        executed.set(req.idempotency_key, runs + 1);
        // The first time the tool runs but its reply comes too late; afterwards the toolbus replays the recorded result.
        if (runs === 0) await sleep(600);
        return okReply(req, { hits: 7 }, runs > 0 ? { replayed: true } : {});
      },
    });
    const j = job();
    llm.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'web_search', arguments: { q: 'dns' } }], usage: { prompt_tokens: 10, completion_tokens: 5 } },
      { content: 'resumed answer', usage: { prompt_tokens: 20, completion_tokens: 4 } },
    );
    const first = await f.deliver(j);

    expect(await rejectionOf(f.runner.run(j, first))).toMatchObject({ code: 'timeout', retryable: true });
    expect(llm.requests).toHaveLength(1);
    const second = await f.redeliver(first);
    expect(second.info.deliveryCount).toBe(2);
    await f.runner.run(j, second);

    expect(llm.requests).toHaveLength(2);
    expect(f.toolCalls.map((c) => c.req.idempotency_key)).toEqual([`${j.task_id}:main:1:0`, `${j.task_id}:main:1:0`]);
    expect(f.toolCalls.map((c) => c.req.tool_call_id)).toEqual(['call_1', 'call_1']);
    // The re-sent call says so, which makes the toolbus look for its record first.
    expect(f.toolCalls.map((c) => c.req.resumed)).toEqual([undefined, true]);
    const resumed = sentMessages(1);
    expect(resumed.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(toolContent(resumed.at(-1))).toEqual({ ok: true, result: { hits: 7 } });
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', attempt: 2, output: 'resumed answer', usage: { input_tokens: 30, output_tokens: 9 } }]);
    // Step event ids are stable, so what the second attempt publishes again is de-duplicated.
    const events = await f.events(j.task_id);
    expect(kinds(events).filter((k) => k === 'started')).toHaveLength(2);
    const data = await f.steps(j.task_id);
    expect(data.map((d) => [d.step, d.kind])).toEqual([
      [1, 'llm_call'],
      [1, 'tool_call'],
      [1, 'tool_result'],
      [2, 'llm_call'],
    ]);
    expect(data[2]?.detail).toMatchObject({ status: 'ok', replayed: true });
  });

  it('a runtime whose checkpoint another runtime updated mid-run stops quietly, leaving that checkpoint alone', async () => {
    const j = job();
    const f = await runtimeFixture({
      onToolCall: async (req) => {
        // The job was redelivered to another runtime, which checkpointed it while this one ran the tool.
        const other = await f.otherRuntime();
        const cp = await other.load(j.job_id);
        if (!cp) throw new Error('no checkpoint to take over');
        await other.save({ ...cp, messages: [...cp.messages, { role: 'user', content: 'taken over' }] });
        return okReply(req, { hits: 1 });
      },
    });
    llm.enqueue({ toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] }, { content: 'stale answer' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(f.toolCalls).toHaveLength(1);
    // Tool results get no checkpoint write of their own, so the stale runtime learns of the
    // takeover at its next write: after one more LLM call, before anything with an effect.
    expect(llm.requests).toHaveLength(2);
    expect(await f.results()).toEqual([]);
    expect(f.appends).toEqual([]);
    const kept = await (await f.otherRuntime()).load(j.job_id);
    expect(kept).toMatchObject({ step: 1, pending: true });
    expect(kept?.messages.at(-1)).toEqual({ role: 'user', content: 'taken over' });
  });

  it('a call parked for approval is asked again, with the same key, as soon as the settled notice arrives', async () => {
    let approved = false;
    const f = await runtimeFixture({
      approvalPollMs: 10_000,
      onToolCall: async (req) => (approved ? okReply(req, { sent: true }) : { call_id: 'c_approve_me', status: 'pending_approval' }),
    });
    const j = job();
    llm.enqueue({ toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] }, { content: 'sent after approval' });
    const msg = await f.deliver(j);

    const running = f.runner.run(j, msg);
    await eventually(() => f.toolCalls.length === 1, 5_000, 'the first toolCall request');
    // Give the runtime time to subscribe to the notice after its pending reply.
    await sleep(300);
    approved = true;
    const settledAt = Date.now();
    await f.bus.publish(contracts.toolCallSettled, { call_id: 'c_approve_me', status: 'approved' }, { subject: f.bus.subjects.toolCallSettled(j.task_id) });
    await running;

    expect(f.toolCalls).toHaveLength(2);
    expect(f.toolCalls[1]!.at - settledAt).toBeLessThan(1_000);
    expect(new Set(f.toolCalls.map((c) => c.req.idempotency_key))).toEqual(new Set([`${j.task_id}:main:1:0`]));
    expect(toolContent(sentMessages(1).at(-1))).toEqual({ ok: true, result: { sent: true } });
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'sent after approval' }]);
  });

  it('a turn of many calls all parked for approval waits on the job signal without a listener warning', async () => {
    const asked = new Map<string, number>();
    const f = await runtimeFixture({
      cancellable: true,
      approvalPollMs: 100,
      onToolCall: async (req) => {
        const n = (asked.get(req.idempotency_key) ?? 0) + 1;
        asked.set(req.idempotency_key, n);
        return n < 3 ? { call_id: `c_${req.call_index}`, status: 'pending_approval' } : okReply(req, { sent: req.call_index });
      },
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const j = job();
      const calls = Array.from({ length: 12 }, (_, i) => ({ name: 'web_search', arguments: { q: `q${i}` } }));
      llm.enqueue({ toolCalls: calls }, { content: 'all sent' });
      await f.runner.run(j, await f.deliver(j));
      // Warnings are emitted on the next tick.
      await sleep(50);
      expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'all sent' }]);
      expect(f.toolCalls).toHaveLength(36);
      expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a call parked for approval is polled at approvalPollMs when no notice comes', async () => {
    let asked = 0;
    const f = await runtimeFixture({
      approvalPollMs: 200,
      onToolCall: async (req) => (++asked < 3 ? { call_id: 'c_poll', status: 'pending_approval' } : okReply(req, { sent: true })),
    });
    const j = job();
    llm.enqueue({ toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] }, { content: 'sent after polling' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    const at = f.toolCalls.map((c) => c.at);
    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(180);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(180);
    expect(at[2]! - at[0]!).toBeLessThan(2_000);
    expect(new Set(f.toolCalls.map((c) => c.req.idempotency_key)).size).toBe(1);
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'sent after polling' }]);
  });

  it('a streamed job emits token_delta step events per step whose texts add up to what the model said', async () => {
    const f = await runtimeFixture();
    const j = job({ stream: true });
    const answer = 'The incident was a DNS outage caused by an expired certificate on the resolver.';
    llm.enqueue({ content: 'Let me look that up.', toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] }, { content: answer });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: answer }]);
    const deltas = (await f.steps(j.task_id)).filter((d) => d.kind === 'token_delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.map((d) => d.detail?.index)).toEqual(deltas.map((_, i) => i));
    expect(deltas.every((d) => d.detail?.attempt === 1)).toBe(true);
    const textOf = (step: number) =>
      deltas
        .filter((d) => d.step === step)
        .map((d) => d.detail?.text)
        .join('');
    expect(textOf(1)).toBe('Let me look that up.');
    expect(textOf(2)).toBe(answer);
  });

  it('a job that is not streamed emits no token_delta events', async () => {
    const f = await runtimeFixture();
    const j = job();
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(llm.requests[0]?.body.stream).toBeFalsy();
    expect((await f.steps(j.task_id)).map((d) => d.kind)).toEqual(['llm_call']);
  });

  it("the toolCall and toolsList requests carry the job's roles and the task's tool allow-list", async () => {
    const f = await runtimeFixture();
    const j = job({ roles: ['user', 'sre'], tools: ['web_search'] });
    llm.enqueue({ toolCalls: [{ name: 'web_search', arguments: { q: 'dns' } }] }, { content: 'done' });
    const msg = await f.deliver(j);

    await f.runner.run(j, msg);

    expect(f.toolLists).toEqual([{ user_id: 'u_alice', roles: ['user', 'sre'], allow: ['web_search'] }]);
    expect(f.toolCalls.map((c) => [c.req.user_id, c.req.roles, c.req.allow])).toEqual([['u_alice', ['user', 'sre'], ['web_search']]]);
  });
});
