import { describe, expect, it } from 'vitest';
import { RemoteError, type Bus } from '@hermes/bus';
import { toolCallIdFor, type ToolCallRequest } from '@hermes/contracts';
import { cacheKey } from '../src/result-cache.js';
import { eventually } from '@hermes/testkit';
import {
  callRequest,
  callTool,
  connect,
  freshPrefix,
  natsForFile,
  remoteTool,
  startStandInProvider,
  startTestToolbus,
  waitForTool,
  type StandInProvider,
} from './helpers.js';

const nats = natsForFile();
const cleanups = nats.cleanups;

/** A bus on a fresh prefix, a toolbus and a remote `send` tool (with side effects) that counts its runs. */
async function setup(before?: (bus: Bus) => Promise<void>): Promise<{ bus: Bus; provider: StandInProvider }> {
  const bus = await connect(nats.url, freshPrefix());
  await before?.(bus);
  const toolbus = await startTestToolbus(bus);
  const provider = await startStandInProvider(bus, { provider: 'effects', tools: [remoteTool('send')], run: async (r) => ({ sent: r.arguments.q }) });
  cleanups.push(async () => {
    provider.stop();
    await toolbus.stop(2000);
    await bus.drain();
  });
  await waitForTool(bus, 'send');
  return { bus, provider };
}

const recordKey = (req: ToolCallRequest) => toolCallIdFor(req.idempotency_key);

describe('stored call records', () => {
  it('a call whose record is unreadable is refused as corrupt_state naming the bucket and key, and the tool does not run', async () => {
    const { bus, provider } = await setup();
    const req = callRequest({ tool: 'send', arguments: '{"q": "x"}' });
    await (await bus.kv('toolCalls')).put(recordKey(req), JSON.stringify({ call_id: recordKey(req), state: 'finished' }));

    const err = await callTool(bus, req).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).wire).toMatchObject({
      code: 'corrupt_state',
      retryable: false,
      details: { record: 'StoredCallRecord', bucket: bus.subjects.buckets.toolCalls, key: recordKey(req) },
    });
    expect(provider.received).toHaveLength(0);
  });

  it('records are written with their version, and one written before records had one still replays', async () => {
    const { bus, provider } = await setup();
    const kv = await bus.kv('toolCalls');
    const req = callRequest({ tool: 'send', arguments: '{"q": "x"}' });
    const first = await callTool(bus, req);
    const stored = (await kv.get(recordKey(req)))!.json<Record<string, unknown>>();
    expect(stored).toMatchObject({ v: 1, state: 'done' });

    // The record as the previous release left it: the same fields, no `v`.
    const { v: _v, ...unversioned } = stored;
    await kv.put(recordKey(req), JSON.stringify(unversioned));

    expect(await callTool(bus, req)).toEqual({ ...first, replayed: true });
    expect(provider.received).toHaveLength(1);
  });
});

describe('stored pending approvals', () => {
  it('an unreadable entry in the approvals bucket does not stop the toolbus from starting and serving', async () => {
    const { bus, provider } = await setup(async (b) => {
      await (await b.kv('toolApprovals')).put('t_pay.main.1.0', 'not json');
    });

    expect(await callTool(bus, callRequest({ tool: 'send', arguments: '{"q": "y"}' }))).toMatchObject({ status: 'ok', result: { sent: 'y' } });
    await eventually(() => provider.received.length === 1, 5_000, 'the call');
  });
});

describe('stored cache entries', () => {
  it('an unreadable cache entry is a miss: the tool runs, and its result, written with its version, replaces the entry', async () => {
    const bus = await connect(nats.url, freshPrefix());
    const toolbus = await startTestToolbus(bus);
    const p: StandInProvider = await startStandInProvider(bus, {
      provider: 'geo',
      tools: [{ ...remoteTool('geocode'), idempotent: true, cache_ttl_ms: 60_000 }],
      run: async (r) => ({ place: r.arguments.q, runs: p.received.length }),
    });
    cleanups.push(async () => {
      p.stop();
      await toolbus.stop(2000);
      await bus.drain();
    });
    await waitForTool(bus, 'geocode');
    const cache = await bus.kv('toolCache');
    await cache.put(cacheKey('geocode', { q: 'Paris' }), '{"stored_at": "yesterday"}');

    const first = await callTool(bus, callRequest({ tool: 'geocode', arguments: '{"q": "Paris"}' }));
    expect(first).toMatchObject({ status: 'ok', result: { place: 'Paris', runs: 1 } });
    expect(first.cached).toBeUndefined();
    await eventually(async () => (await cache.get(cacheKey('geocode', { q: 'Paris' })))?.json<{ v?: number }>().v === 1, 5_000, 'the new entry');
    expect(await callTool(bus, callRequest({ tool: 'geocode', arguments: '{"q": "Paris"}' }))).toMatchObject({ result: { runs: 1 }, cached: true });
  });
});
