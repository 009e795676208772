import { describe, expect, it } from 'vitest';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { contracts, MICRO_TYPES, microSubject } from '@hermes/contracts';
import { microServiceStats, microServiceTotals, request, type Bus } from '@hermes/bus';
import { defineTool, hostToolProvider, type ToolProvider } from '@hermes/tool-sdk';
import { callRequest, callTool, connect, freshPrefix, natsForFile, remoteTool, startTestToolbus, waitForTool } from './helpers.js';

const nats = natsForFile();
const cleanups = nats.cleanups;
// Rounds every 300 ms: a provider that stops answering is gone after two missed rounds (750 ms of
// TTL); polls below allow several seconds because the machine is shared and rounds may run late.
const INTERVAL_MS = 300;
let names = 0;

async function setup(): Promise<{ bus: Bus; prefix: string }> {
  const prefix = freshPrefix();
  const bus = await connect(nats.url, prefix);
  cleanups.push(() => bus.drain());
  const toolbus = await startTestToolbus(bus, { TOOL_SRV_DISCOVERY_INTERVAL_MS: INTERVAL_MS });
  cleanups.push(() => toolbus.stop(2000));
  return { bus, prefix };
}

async function rawConnection(): Promise<NatsConnection> {
  const nc = await natsConnect({ servers: nats.url, name: 'micro-provider' });
  cleanups.push(() => nc.close());
  return nc;
}

const listed = async (bus: Bus) => (await request(bus, contracts.toolsList, {})).tools.map((t) => t.name);

/** A tool-sdk provider that never announces: the toolbus can only find it through $SRV. */
async function microOnly(nc: NatsConnection, prefix: string, provider: string, tool: string): Promise<ToolProvider> {
  const hosted = await hostToolProvider({
    nc,
    prefix,
    provider,
    announce: false,
    tools: [defineTool(remoteTool(tool), async (args: { q?: string }) => `micro:${args.q ?? ''}`)],
  });
  cleanups.push(() => hosted.stop(1000));
  return hosted;
}

describe('tool providers as NATS micro services', () => {
  it('finds a provider that never announces through $SRV.PING/INFO, calls its endpoint, and counts the call in $SRV.STATS', async () => {
    const { bus, prefix } = await setup();
    const provider = `micro-${++names}`;
    await microOnly(await rawConnection(), prefix, provider, 'micro_echo');
    await waitForTool(bus, 'micro_echo');
    const list = await request(bus, contracts.toolsList, {});
    expect(list.tools.find((t) => t.name === 'micro_echo')?.origin).toEqual({ kind: 'provider', name: provider });

    const reply = await callTool(bus, callRequest({ tool: 'micro_echo', arguments: JSON.stringify({ q: 'hi' }) }));
    expect(reply).toMatchObject({ status: 'ok', result: { result: 'micro:hi' } });
    const [stats] = await microServiceStats(bus, { name: provider });
    expect(stats).toMatchObject({ type: MICRO_TYPES.STATS, name: provider });
    expect(microServiceTotals(stats!)).toEqual({ requests: 1, errors: 0 });
  });

  it('drops a provider that stops answering after two missed rounds, and finds it again when it is back', async () => {
    const { bus, prefix } = await setup();
    const provider = `micro-${++names}`;
    const first = await microOnly(await rawConnection(), prefix, provider, 'micro_flaky');
    await waitForTool(bus, 'micro_flaky');
    await first.stop(1000);
    await expect.poll(() => listed(bus), { timeout: 8000, interval: 100 }).not.toContain('micro_flaky');
    // Gone recently: refused as retryable, not as a tool that never existed.
    expect((await callTool(bus, callRequest({ tool: 'micro_flaky' }))).error).toMatchObject({ code: 'provider_unavailable', retryable: true });

    await microOnly(await rawConnection(), prefix, provider, 'micro_flaky');
    await waitForTool(bus, 'micro_flaky');
    expect(await callTool(bus, callRequest({ tool: 'micro_flaky', arguments: JSON.stringify({ q: 'back' }) }))).toMatchObject({
      status: 'ok',
      result: { result: 'micro:back' },
    });
  });

  it('takes nothing from a service whose endpoints are not under its own exec subject (another provider’s name, another deployment)', async () => {
    const { bus, prefix } = await setup();
    const victim = `micro-${++names}`;
    const nc = await rawConnection();
    // A rival claims the victim's name and points its endpoint at a subject it serves itself.
    const spec = JSON.stringify(remoteTool('stolen_tool'));
    for (const subject of [microSubject('PING'), microSubject('INFO', victim)]) {
      nc.subscribe(subject, {
        callback: (_err, msg) => {
          msg.respond(
            JSON.stringify({
              type: MICRO_TYPES.INFO,
              name: victim,
              id: 'rival',
              version: '1.0.0',
              endpoints: [{ name: 'stolen_tool', subject: `${prefix}.tools.rival`, metadata: { 'hermes.tool_spec': spec } }],
            }),
          );
        },
      });
    }
    await nc.flush();
    // A real provider of the same prefix, to know that rounds have run since the rival appeared.
    await microOnly(await rawConnection(), prefix, `micro-${++names}`, 'micro_witness');
    await waitForTool(bus, 'micro_witness');
    await new Promise((r) => setTimeout(r, INTERVAL_MS * 3));
    expect(await listed(bus)).not.toContain('stolen_tool');
  });

  it('reads the specs of an older Go micro service from $SRV.SCHEMA (one endpoint on the exec subject, no metadata)', async () => {
    const { bus, prefix } = await setup();
    const provider = `go-old-${++names}`;
    const nc = await rawConnection();
    const identity = { name: provider, id: 'go1', version: '1.0.0' };
    const exec = `${prefix}.tools.exec.${provider}`;
    const replies: Record<string, object> = {
      PING: { type: MICRO_TYPES.PING, ...identity },
      INFO: { type: MICRO_TYPES.INFO, ...identity, description: 'old Go', subject: exec },
      SCHEMA: { type: MICRO_TYPES.SCHEMA, ...identity, schema: { request: JSON.stringify([remoteTool('old_go_tool')]), response: '' } },
    };
    for (const [verb, body] of Object.entries(replies)) {
      for (const subject of [microSubject(verb as 'PING'), microSubject(verb as 'PING', provider), microSubject(verb as 'PING', provider, 'go1')]) {
        nc.subscribe(subject, { callback: (_err, msg) => void msg.respond(JSON.stringify(body)) });
      }
    }
    nc.subscribe(exec, { queue: 'q', callback: (_err, msg) => void msg.respond(JSON.stringify({ ok: true, result: { result: 'from old go' } })) });
    await nc.flush();
    await waitForTool(bus, 'old_go_tool');
    expect(await callTool(bus, callRequest({ tool: 'old_go_tool' }))).toMatchObject({ status: 'ok', result: { result: 'from old go' } });
  });
});
