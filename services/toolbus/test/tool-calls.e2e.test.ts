import { describe, expect, it } from 'vitest';
import type { ToolCallReply } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';
import { toolCallIdFor, type ToolCallRequest } from '@hermes/contracts';
import { eventually } from '@hermes/testkit';
import type { Toolbus } from '../src/toolbus.js';
import {
  auditRecords,
  callRequest,
  callTool,
  connect,
  freshPrefix,
  natsForFile,
  remoteTool,
  sleep,
  type StandInProvider,
  startStandInProvider,
  startTestToolbus,
  waitForTool,
} from './helpers.js';
import { natsHandles } from '@hermes/bus/internal';

const nats = natsForFile();
const cleanups = nats.cleanups;

/** A bus on a fresh prefix with one toolbus replica on it; torn down after the test. */
async function setup(settings: Parameters<typeof startTestToolbus>[1] = {}): Promise<{ bus: Bus; toolbus: Toolbus; prefix: string }> {
  const prefix = freshPrefix();
  const bus = await connect(nats.url, prefix);
  const toolbus = await startTestToolbus(bus, settings);
  cleanups.push(async () => {
    await toolbus.stop(2000);
    await bus.drain();
  });
  return { bus, toolbus, prefix };
}

const recordKey = (req: ToolCallRequest) => toolCallIdFor(req.idempotency_key);

async function provider(bus: Bus, ...args: Parameters<typeof startStandInProvider>): Promise<StandInProvider> {
  const p = await startStandInProvider(...args);
  cleanups.push(() => p.stop());
  const first = args[1].tools[0]!;
  await waitForTool(bus, first.name, first.roles ?? []);
  return p;
}

/** A `charge` provider whose first call stalls 5 s (its toolbus dies meanwhile); `firstCallArrived` once it is in its hands. */
async function stallingCharger(bus: Bus): Promise<{ p: StandInProvider; firstCallArrived: Promise<void> }> {
  let release: () => void = () => undefined;
  const firstCallArrived = new Promise<void>((resolve) => (release = resolve));
  const p: StandInProvider = await startStandInProvider(bus, {
    provider: 'payments',
    tools: [remoteTool('charge')],
    run: async () => {
      if (p.received.length === 1) {
        release();
        await sleep(5000); // this answer goes nowhere
      }
      return { charged: true };
    },
  });
  return { p, firstCallArrived };
}

describe('arguments', () => {
  it('repairs almost-JSON arguments (trailing comma, single quotes, code fence) and runs the tool', async () => {
    const { bus } = await setup();
    for (const raw of ["{'text': 'hi',}", '```json\n{"text": "hi"}\n```', '{"text": "hi",}']) {
      const reply = await callTool(bus, callRequest({ tool: 'echo', arguments: raw }));
      expect(reply).toMatchObject({ status: 'ok', result: { result: 'hi' } });
    }
  });

  it('answers invalid arguments with issues naming the field, what was expected and what came, and replays them identically', async () => {
    const { bus } = await setup();
    const req = callRequest({ tool: 'date_add', arguments: '{"date": "tomorrow", "dayz": 1, "hours": "2"}' });
    const reply = await callTool(bus, req);
    expect(reply.status).toBe('error');
    expect(reply.error).toMatchObject({ code: 'invalid_arguments', retryable: false });
    expect(reply.error?.issues).toEqual(
      expect.arrayContaining([
        { path: '/date', message: 'must match format "date-or-date-time"', expected: 'string (format date-or-date-time)', got: '"tomorrow"' },
        expect.objectContaining({ path: '/dayz', message: expect.stringContaining('is not an allowed property'), got: '1' }),
        expect.objectContaining({ path: '/hours', message: 'must be integer', got: '"2"' }),
      ]),
    );
    const missing = await callTool(bus, callRequest({ tool: 'date_diff', arguments: '{"from": "2025-01-01"}' }));
    expect(missing.error?.issues).toEqual([expect.objectContaining({ path: '/to', message: 'is required' })]);
    expect(await callTool(bus, req)).toEqual({ ...reply, replayed: true });
  });
});

describe('permissions and unknown tools', () => {
  it('refuses a tool the caller has no role for, and one outside the allow-list, and audits both as denied', async () => {
    const { bus } = await setup();
    await provider(bus, bus, { provider: 'ops', tools: [remoteTool('restart_service', { roles: ['ops'] })], run: async () => 'restarted' });
    const byRole = await callTool(bus, callRequest({ task_id: 't_perm', tool: 'restart_service', roles: ['member'] }));
    expect(byRole).toMatchObject({ status: 'error', error: { code: 'tool_forbidden', message: expect.stringContaining('requires one of the roles ops') } });
    const byAllow = await callTool(bus, callRequest({ task_id: 't_perm', tool: 'echo', arguments: '{"text":"x"}', allow: ['time_now'] }));
    expect(byAllow).toMatchObject({ status: 'error', error: { code: 'tool_forbidden', message: expect.stringContaining('allow-list') } });
    const allowed = await callTool(bus, callRequest({ task_id: 't_perm', tool: 'restart_service', roles: ['ops'] }));
    expect(allowed).toMatchObject({ status: 'ok', result: { result: 'restarted' } });
    await expect
      .poll(async () => (await auditRecords(bus, 't_perm')).map((a) => `${a.tool}:${a.outcome}:${a.error_code ?? ''}`).sort(), { timeout: 3000 })
      .toEqual(['echo:denied:tool_forbidden', 'restart_service:denied:tool_forbidden', 'restart_service:ok:']);
  });

  it('answers an unknown tool with the names of the tools the caller may use', async () => {
    const { bus } = await setup();
    const reply = await callTool(bus, callRequest({ tool: 'delete_everything', allow: ['time_now', 'echo'] }));
    expect(reply.error).toMatchObject({ code: 'tool_not_found', message: 'there is no tool "delete_everything"; tools you may use: time_now, echo' });
  });
});

describe('timeouts', () => {
  it('stops waiting for a tool at its timeout with a retryable tool_timeout, while other calls go on', async () => {
    const { bus } = await setup();
    await provider(bus, bus, { provider: 'slow', tools: [remoteTool('slow_tool', { timeout_ms: 700 })], run: () => sleep(5000).then(() => 'late') });
    const started = Date.now();
    let slowAnswered = false;
    const slow = callTool(bus, callRequest({ tool: 'slow_tool' })).finally(() => (slowAnswered = true));
    const quick = await callTool(bus, callRequest({ tool: 'time_now' }));
    expect(quick.status).toBe('ok');
    // Answered while the slow call still waits (an order, not a wall-clock bound: a loaded machine is slow).
    expect(slowAnswered).toBe(false);
    const reply = await slow;
    expect(reply.error).toMatchObject({ code: 'tool_timeout', retryable: true, message: 'tool "slow_tool" did not finish within 700 ms' });
    // Ended by its timeout, not by the tool's 5 s run.
    expect(Date.now() - started).toBeLessThan(4500);
  });

  it('aborts a built-in tool at its timeout', async () => {
    let aborted = false;
    const stuck = {
      spec: { name: 'stuck', description: 'never finishes', parameters: { type: 'object', properties: {}, additionalProperties: false }, timeout_ms: 200 },
      run: (_args: unknown, ctx: { signal: AbortSignal }) =>
        new Promise<never>((_resolve, reject) => ctx.signal.addEventListener('abort', () => ((aborted = true), reject(new Error('aborted'))))),
    };
    const prefix = freshPrefix();
    const bus = await connect(nats.url, prefix);
    const toolbus = await startTestToolbus(bus, {}, [stuck]);
    cleanups.push(async () => {
      await toolbus.stop(2000);
      await bus.drain();
    });
    const started = Date.now();
    expect((await callTool(bus, callRequest({ tool: 'stuck' }))).error).toMatchObject({
      code: 'tool_timeout',
      retryable: true,
      message: 'tool "stuck" did not finish within 200 ms',
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(aborted).toBe(true);
  });

  it('reports a provider nobody serves, once its tool timeout has passed without one coming back, as provider_unavailable, and a provider error as tool_failed', async () => {
    const { bus } = await setup();
    // A short tool timeout: the toolbus asks a provider nobody serves again until it runs out.
    const gone = await provider(bus, bus, {
      provider: 'flaky',
      tools: [remoteTool('flaky_tool', { timeout_ms: 1500 }), remoteTool('broken_tool')],
      run: async (r) => {
        if (r.tool === 'broken_tool') throw new Error('database is read-only');
        return 'fine';
      },
    });
    expect((await callTool(bus, callRequest({ tool: 'broken_tool' }))).error).toMatchObject({ code: 'tool_failed', message: 'database is read-only' });
    gone.stop();
    // Still announced within its TTL, but nobody answers.
    expect((await callTool(bus, callRequest({ tool: 'flaky_tool' }))).error).toMatchObject({ code: 'provider_unavailable', retryable: true });
  });

  it('a provider nobody serves for a moment (reconnecting, restarting) is asked again under the same key and runs the call once', async () => {
    const { bus } = await setup();
    const first = await provider(bus, bus, { provider: 'blinking', tools: [remoteTool('blink_tool', { timeout_ms: 8000 })], run: async () => 'first' });
    first.stop();
    const call = callTool(bus, callRequest({ tool: 'blink_tool' }));
    await new Promise((r) => setTimeout(r, 600));
    const back = await provider(bus, bus, { provider: 'blinking', tools: [remoteTool('blink_tool', { timeout_ms: 8000 })], run: async () => 'back' });
    expect(await call).toMatchObject({ status: 'ok', result: { result: 'back' } });
    expect(back.received).toHaveLength(1);
  });
});

describe('exactly once', () => {
  it('runs a call once; the same idempotency key again replays the recorded reply', async () => {
    const { bus } = await setup();
    const p = await provider(bus, bus, { provider: 'counter', tools: [remoteTool('count')], run: async () => ({ count: p.received.length }) });
    const req = callRequest({ tool: 'count', arguments: '{"q": "a"}' });
    const first = await callTool(bus, req);
    const second = await callTool(bus, req);
    expect(first).toMatchObject({ status: 'ok', result: { count: 1 } });
    expect(first.replayed).toBeUndefined();
    expect(second).toEqual({ ...first, replayed: true });
    expect(p.received).toHaveLength(1);
    expect(p.received[0]).toMatchObject({
      idempotency_key: req.idempotency_key,
      arguments: { q: 'a' },
      context: { task_id: req.task_id, user_id: 'u1', roles: ['member'] },
    });
  });

  it('answers a side-effect-free call before its one record is written; a resumed runtime replays that record', async () => {
    const { bus } = await setup();
    const kv = await bus.kv('toolCalls');
    const writes = async () => (await kv.status()).streamInfo.state.last_seq;
    const p = await provider(bus, bus, {
      provider: 'pure',
      tools: [{ ...remoteTool('upper'), idempotent: true }],
      run: async (r) => ({ q: String(r.arguments.q).toUpperCase(), run: p.received.length }),
    });
    const before = await writes();
    const req = callRequest({ tool: 'upper', arguments: '{"q": "a"}' });
    const first = await callTool(bus, req);
    expect(first).toMatchObject({ status: 'ok', result: { q: 'A', run: 1 } });
    // The record follows the reply: one write, no `running` record first.
    await eventually(async () => (await writes()) - before === 1, 5_000, 'the record');
    expect((await kv.get(recordKey(req)))?.json()).toMatchObject({ state: 'done', replaceable: true, reply: first });
    // A resumed runtime looks for the record first and gets the reply recorded, without a run.
    expect(await callTool(bus, { ...req, resumed: true })).toEqual({ ...first, replayed: true });
    expect(p.received).toHaveLength(1);
    // Any other resend may run it again (harmless by its declaration) and is not recorded twice.
    expect(await callTool(bus, req)).toMatchObject({ status: 'ok', result: { q: 'A', run: 2 } });
    await sleep(100);
    expect((await writes()) - before).toBe(1);
    // A tool with side effects still gets its running record first, then its result.
    const withEffects = await writes();
    await provider(bus, bus, { provider: 'effects', tools: [remoteTool('send')], run: async () => 'sent' });
    await callTool(bus, callRequest({ tool: 'send', arguments: '{"q": "x"}' }));
    expect((await writes()) - withEffects).toBe(2);
  });

  it('lets another call take over the key of a side-effect-free call whose turn was asked again, and runs it once', async () => {
    const { bus } = await setup();
    const p = await provider(bus, bus, { provider: 'effects', tools: [remoteTool('send')], run: async () => ({ sent: p.received.length }) });
    // A runtime sent echo alongside a checkpoint that never landed; asked again, the model wants `send`.
    const stale = callRequest({ tool: 'echo', arguments: '{"text": "old"}' });
    expect(await callTool(bus, stale)).toMatchObject({ status: 'ok', result: { result: 'old' } });
    const kv = await bus.kv('toolCalls');
    await eventually(async () => (await kv.get(recordKey(stale)))?.json<{ state: string }>().state === 'done', 5_000, 'the stale record');
    const fresh = { ...stale, tool: 'send', arguments: '{"q": "new"}' };
    const first = await callTool(bus, fresh);
    expect(first).toMatchObject({ status: 'ok', result: { sent: 1 } });
    expect(await callTool(bus, { ...fresh, resumed: true })).toEqual({ ...first, replayed: true });
    expect(p.received).toHaveLength(1);
    // Another side-effect-free call under the key, with other arguments, also runs rather than replays.
    const echoed = callRequest({ tool: 'echo', arguments: '{"text": "one"}' });
    await callTool(bus, echoed);
    await eventually(async () => (await kv.get(recordKey(echoed))) !== null, 5_000, 'the record');
    expect(await callTool(bus, { ...echoed, arguments: '{"text": "two"}' })).toMatchObject({ status: 'ok', result: { result: 'two' } });
  });

  it('refuses an idempotency key reused for another task, or for a different call after one with side effects', async () => {
    const { bus } = await setup();
    await provider(bus, bus, { provider: 'effects', tools: [remoteTool('send')], run: async () => 'sent' });
    const req = callRequest({ tool: 'send', arguments: '{"q": "a"}' });
    await callTool(bus, req);
    await expect(callTool(bus, { ...req, arguments: '{"q": "b"}' })).rejects.toMatchObject({ code: 'idempotency_conflict' });
    await expect(callTool(bus, { ...req, tool: 'time_now', arguments: '{}' })).rejects.toMatchObject({ code: 'idempotency_conflict' });
    const echo = callRequest({ tool: 'echo', arguments: '{"text": "a"}', resumed: true });
    await callTool(bus, echo);
    await expect(callTool(bus, { ...echo, task_id: 't_other' })).rejects.toMatchObject({ code: 'idempotency_conflict' });
  });

  it('runs a call once when two toolbus replicas on two connections get it at the same time', async () => {
    const prefix = freshPrefix();
    const [busA, busB, busP] = await Promise.all([connect(nats.url, prefix, 'a'), connect(nats.url, prefix, 'b'), connect(nats.url, prefix, 'p')]);
    const [a, b] = await Promise.all([startTestToolbus(busA), startTestToolbus(busB)]);
    const p = await startStandInProvider(busP, { provider: 'counter', tools: [remoteTool('count')], run: () => sleep(200).then(() => 'done') });
    cleanups.push(async () => {
      p.stop();
      await Promise.all([a.stop(2000), b.stop(2000)]);
      await Promise.all([busA.drain(), busB.drain(), busP.drain()]);
    });
    await waitForTool(busA, 'count');
    await expect.poll(() => b.registry.resolve('count')?.provider).toBe('counter');
    const req = callRequest({ tool: 'count' });
    const replies = await Promise.all([a.calls.handle(req), b.calls.handle(req), a.calls.handle(req), b.calls.handle(req)]);
    expect(p.received).toHaveLength(1);
    expect(replies.every((r) => r.status === 'ok' && (r.result as { result: string }).result === 'done')).toBe(true);
    expect(replies.filter((r) => !r.replayed)).toHaveLength(1);
  });

  it('takes over a call whose toolbus died mid-run and runs it again with the same idempotency key', async () => {
    const prefix = freshPrefix();
    const [busA, busB, busP] = await Promise.all([connect(nats.url, prefix, 'a'), connect(nats.url, prefix, 'b'), connect(nats.url, prefix, 'p')]);
    const [a, b] = await Promise.all([startTestToolbus(busA), startTestToolbus(busB)]);
    const { p, firstCallArrived } = await stallingCharger(busP);
    cleanups.push(async () => {
      p.stop();
      await b.stop(2000);
      await Promise.all([busB.drain(), busP.drain()]);
    });
    await expect.poll(() => a.registry.resolve('charge') !== undefined && b.registry.resolve('charge') !== undefined).toBe(true);
    const req = callRequest({ tool: 'charge' });
    const dying = a.calls.handle(req).catch((err: unknown) => err);
    await firstCallArrived;
    await natsHandles(busA).nc.close(); // the replica is gone: no more lease renewals, no result
    await dying;
    const started = Date.now();
    const reply = await b.calls.handle(req);
    expect(reply).toMatchObject({ status: 'ok', result: { charged: true } });
    expect(reply.replayed).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(p.received.map((r) => r.idempotency_key)).toEqual([req.idempotency_key, req.idempotency_key]);
    expect(await b.calls.handle(req)).toMatchObject({ status: 'ok', replayed: true });
  });

  it('leaves a call whose toolbus died to a replica that knows its tool, instead of recording it failed', async () => {
    const prefix = freshPrefix();
    const [busA, busB, busP] = await Promise.all([connect(nats.url, prefix, 'a'), connect(nats.url, prefix, 'b'), connect(nats.url, prefix, 'p')]);
    const a = await startTestToolbus(busA);
    const { p, firstCallArrived } = await stallingCharger(busP);
    await expect.poll(() => a.registry.resolve('charge') !== undefined).toBe(true);
    const req = callRequest({ tool: 'charge' });
    const dying = a.calls.handle(req).catch((err: unknown) => err);
    await firstCallArrived;
    await natsHandles(busA).nc.close();
    await dying;
    // A replica that has not heard of the provider (it started after the provider last announced).
    p.stopAnnouncing();
    const b = await startTestToolbus(busB);
    cleanups.push(async () => {
      p.stop();
      await b.stop(2000);
      await Promise.all([busB.drain(), busP.drain()]);
    });
    await expect(b.calls.handle(req)).rejects.toMatchObject({ code: 'provider_unavailable', wire: { retryable: true } });
    expect(p.received).toHaveLength(1);
    await p.announce();
    await expect.poll(() => b.registry.resolve('charge') !== undefined).toBe(true);
    expect(await b.calls.handle(req)).toMatchObject({ status: 'ok', result: { charged: true } });
    expect(p.received.map((r) => r.idempotency_key)).toEqual([req.idempotency_key, req.idempotency_key]);
  });
});

describe('results', () => {
  it('truncates a long result for the model and keeps the whole of it in the call record', async () => {
    const { bus } = await setup({ TOOL_RESULT_MAX_CHARS: 2000 });
    await provider(bus, bus, { provider: 'docs', tools: [remoteTool('read_doc')], run: async () => 'z'.repeat(40_000) });
    const reply = await callTool(bus, callRequest({ tool: 'read_doc' }));
    expect(reply).toMatchObject({ status: 'ok', truncated: true, full_result_ref: reply.call_id });
    expect(JSON.stringify(reply.result).length).toBeLessThanOrEqual(2000);
    expect((reply.result as { result: string }).result).toContain(`…[truncated: the first`);
    const record = await (await bus.kv('toolCalls')).get(reply.full_result_ref!);
    expect(record?.json<{ full_result: { result: string } }>().full_result.result).toHaveLength(40_000);
  });

  it('serves a cached result for the same arguments of an idempotent tool, without running it', async () => {
    const { bus } = await setup();
    const p = await provider(bus, bus, {
      provider: 'geo',
      tools: [
        {
          ...remoteTool('geocode'),
          parameters: { type: 'object', properties: { q: { type: 'string' }, lang: { type: 'string' } } },
          idempotent: true,
          cache_ttl_ms: 60_000,
        },
      ],
      run: async (r) => ({ place: r.arguments.q, runs: p.received.length }),
    });
    const first = await callTool(bus, callRequest({ tool: 'geocode', arguments: '{"q": "Paris", "lang": "fr"}' }));
    const second = await callTool(bus, callRequest({ tool: 'geocode', arguments: '{"lang": "fr", "q": "Paris"}' }));
    const other = await callTool(bus, callRequest({ tool: 'geocode', arguments: '{"q": "Lyon"}' }));
    expect(first).toMatchObject({ status: 'ok', result: { place: 'Paris', runs: 1 } });
    expect(first.cached).toBeUndefined();
    expect(second).toMatchObject({ status: 'ok', result: { place: 'Paris', runs: 1 }, cached: true });
    expect(other).toMatchObject({ result: { place: 'Lyon', runs: 2 } });
    expect(p.received).toHaveLength(2);
  });
});

describe('audit', () => {
  it('records every call on the audit stream: results, model errors, replays and cache hits', async () => {
    const { bus } = await setup();
    await provider(bus, bus, { provider: 'kb', tools: [remoteTool('kb_search', { idempotent: true, cache_ttl_ms: 60_000 })], run: async () => ['hit'] });
    const task = 't_audit';
    const ok = callRequest({ task_id: task, tool: 'kb_search', arguments: '{"q": "refunds"}' });
    const replies: ToolCallReply[] = [];
    replies.push(await callTool(bus, ok));
    replies.push(await callTool(bus, ok));
    replies.push(await callTool(bus, callRequest({ task_id: task, tool: 'kb_search', arguments: '{"q": "refunds"}' })));
    replies.push(await callTool(bus, callRequest({ task_id: task, tool: 'kb_search', arguments: `{"q": 1, "pad": "${'p'.repeat(6000)}"}` })));
    expect(replies.map((r) => [r.status, r.replayed ?? false, r.cached ?? false])).toEqual([
      ['ok', false, false],
      ['ok', true, false],
      ['ok', false, true],
      ['error', false, false],
    ]);
    await expect.poll(async () => (await auditRecords(bus, task)).length, { timeout: 3000 }).toBe(4);
    const audit = await auditRecords(bus, task);
    expect(audit.map((a) => [a.outcome, a.replayed, a.cached, a.error_code ?? null])).toEqual([
      ['ok', false, false, null],
      ['ok', true, false, null],
      ['ok', false, true, null],
      ['error', false, false, 'invalid_arguments'],
    ]);
    expect(audit[0]).toMatchObject({
      call_id: replies[0]!.call_id,
      idempotency_key: ok.idempotency_key,
      user_id: 'u1',
      roles: ['member'],
      provider: 'kb',
      arguments: '{"q": "refunds"}',
    });
    expect(Buffer.byteLength(audit[3]!.arguments)).toBeLessThanOrEqual(4096);
  });
});
