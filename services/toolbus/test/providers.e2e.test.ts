import { describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { decodeJson, encodeJson, request, type Bus } from '@hermes/bus';
import type { Toolbus } from '../src/toolbus.js';
import { callRequest, callTool, connect, freshPrefix, natsForFile, remoteTool, startStandInProvider, startTestToolbus, waitForTool } from './helpers.js';
import { natsHandles } from '@hermes/bus/internal';

const nats = natsForFile();
const cleanups = nats.cleanups;

async function busOnFreshPrefix(): Promise<Bus> {
  const bus = await connect(nats.url, freshPrefix());
  cleanups.push(() => bus.drain());
  return bus;
}

async function toolbusOn(bus: Bus, settings: Parameters<typeof startTestToolbus>[1] = {}): Promise<Toolbus> {
  const toolbus = await startTestToolbus(bus, settings);
  cleanups.push(() => toolbus.stop(2000));
  return toolbus;
}

const listNames = async (bus: Bus, req: Parameters<typeof request<typeof contracts.toolsList.request, typeof contracts.toolsList.reply>>[2] = {}) =>
  (await request(bus, contracts.toolsList, req)).tools.map((t) => t.name);

describe('toolsList over NATS', () => {
  it('lists built-in and remote tools, filtered by roles and the allow-list', async () => {
    const bus = await busOnFreshPrefix();
    await toolbusOn(bus);
    const p = await startStandInProvider(bus, {
      provider: 'hr',
      tools: [remoteTool('hr_lookup'), remoteTool('hr_fire', { roles: ['hr_admin'] })],
      run: async () => 'ok',
    });
    cleanups.push(() => p.stop());
    await waitForTool(bus, 'hr_lookup');
    expect(await listNames(bus, { roles: ['member'] })).toEqual(['time_now', 'echo', 'date_add', 'date_diff', 'http_get', 'remember', 'recall', 'hr_lookup']);
    expect(await listNames(bus, { roles: ['hr_admin'], allow: ['hr_fire', 'echo'] })).toEqual(['echo', 'hr_fire']);
  });

  it('answers a request that breaks the contract with invalid_payload', async () => {
    const bus = await busOnFreshPrefix();
    await toolbusOn(bus);
    const msg = await natsHandles(bus).nc.request(bus.subjects.toolsList, encodeJson({ allow: 'echo' }), { timeout: 5000 });
    expect(decodeJson(msg.data)).toMatchObject({ ok: true, value: { ok: false, error: { code: 'invalid_payload', retryable: false } } });
  });
});

describe('remote providers', () => {
  it('withdraws the tools of a provider that stops announcing once its TTL passes', async () => {
    const bus = await busOnFreshPrefix();
    await toolbusOn(bus);
    const p = await startStandInProvider(bus, { provider: 'temp', tools: [remoteTool('temp_tool')], ttlMs: 1000, run: async () => 'ok' });
    cleanups.push(() => p.stop());
    await waitForTool(bus, 'temp_tool');
    await new Promise((r) => setTimeout(r, 1200));
    expect(await listNames(bus)).toContain('temp_tool'); // heartbeats keep it alive past one TTL
    p.stopAnnouncing();
    await expect.poll(() => listNames(bus), { timeout: 2500, interval: 100 }).not.toContain('temp_tool');
    // For a while after, a call of it is answered as retryable (the provider may be restarting).
    expect((await callTool(bus, callRequest({ tool: 'temp_tool' }))).error).toMatchObject({
      code: 'provider_unavailable',
      retryable: true,
      message: expect.stringContaining('provider "temp" stopped announcing'),
    });
    expect((await callTool(bus, callRequest({ tool: 'never_announced' }))).error).toMatchObject({ code: 'tool_not_found' });
  });

  it('asks providers to announce when a toolbus starts, so it knows their tools at once', async () => {
    const bus = await busOnFreshPrefix();
    // The provider's own first announcement reaches no toolbus; its heartbeat is far away.
    const p = await startStandInProvider(bus, { provider: 'early', tools: [remoteTool('early_tool')], ttlMs: 60_000, run: async () => 'ok' });
    cleanups.push(() => p.stop());
    const toolbus = await toolbusOn(bus);
    await expect.poll(() => toolbus.registry.resolve('early_tool')?.provider, { timeout: 1000, interval: 20 }).toBe('early');
  });

  it('a toolbus that has just started does not answer a call of a tool it has not heard of yet as failed', async () => {
    const bus = await busOnFreshPrefix();
    // Announced before the toolbus exists; the next heartbeat is far away, so the toolbus learns
    // the tool only from the provider's answer to its discover request, which takes a round trip.
    const p = await startStandInProvider(bus, { provider: 'late', tools: [remoteTool('late_tool')], ttlMs: 60_000, run: async () => 'ran' });
    cleanups.push(() => p.stop());
    // A grace far longer than the discover round trip, so the first call surely falls inside it.
    const toolbus = await toolbusOn(bus, { TOOL_DISCOVERY_GRACE_MS: 60_000 });
    const req = callRequest({ tool: 'late_tool' });
    // Asked before the answer came in (a runtime retrying while the toolbus restarted): refused as
    // an outage, which the runtime waits out under the same key, never a recorded tool_not_found.
    await expect(toolbus.calls.handle(req)).rejects.toMatchObject({ code: 'provider_unavailable', wire: { retryable: true } });
    await waitForTool(bus, 'late_tool');
    expect(await callTool(bus, req)).toMatchObject({ status: 'ok', result: { result: 'ran' } });
    expect(p.received).toHaveLength(1);
  });

  it('routes a name two providers offer to the provider that announced it first', async () => {
    const bus = await busOnFreshPrefix();
    await toolbusOn(bus);
    const first = await startStandInProvider(bus, { provider: 'first', tools: [remoteTool('lookup')], run: async () => 'from first' });
    await waitForTool(bus, 'lookup');
    const second = await startStandInProvider(bus, {
      provider: 'second',
      tools: [remoteTool('lookup'), remoteTool('second_only')],
      run: async () => 'from second',
    });
    cleanups.push(
      () => first.stop(),
      () => second.stop(),
    );
    await waitForTool(bus, 'second_only');
    expect(await callTool(bus, callRequest({ tool: 'lookup' }))).toMatchObject({ status: 'ok', result: { result: 'from first' } });
    expect((await listNames(bus)).filter((n) => n === 'lookup')).toHaveLength(1);
  });

  it('keeps serving a provider while any of its instances announces', async () => {
    const bus = await busOnFreshPrefix();
    await toolbusOn(bus);
    const a = await startStandInProvider(bus, {
      provider: 'multi',
      instanceId: 'multi-a',
      tools: [remoteTool('multi_tool')],
      ttlMs: 1000,
      run: async () => 'a',
    });
    const b = await startStandInProvider(bus, {
      provider: 'multi',
      instanceId: 'multi-b',
      tools: [remoteTool('multi_tool')],
      ttlMs: 1000,
      run: async () => 'b',
    });
    cleanups.push(
      () => a.stop(),
      () => b.stop(),
    );
    await waitForTool(bus, 'multi_tool');
    a.stop();
    await new Promise((r) => setTimeout(r, 1300));
    expect(await callTool(bus, callRequest({ tool: 'multi_tool' }))).toMatchObject({ status: 'ok', result: { result: 'b' } });
  });
});
