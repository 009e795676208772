import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { microServiceStats, microServiceTotals } from '@hermes/bus';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { natsHandles } from '@hermes/bus/internal';
import { connectBus } from './support.js';

// $SRV.STATS as any NATS services client answers it, played here by plain responders on a real
// nats-server, so the shapes of both API generations and a broken reply can be sent on purpose.
let nats: NatsServerHandle;
let bus: Bus;

beforeAll(async () => {
  nats = await startNatsServer();
  bus = await connectBus(nats.url);
}, 30_000);

afterAll(async () => {
  await bus?.drain();
  await cleanupAll();
});

function answer(subject: string, reply: string): void {
  natsHandles(bus).nc.subscribe(subject, { callback: (_err, m) => void m.respond(reply) });
}

describe('microServiceStats', () => {
  it('reads every instance’s stats in both API shapes and skips a reply that is not a stats reply', async () => {
    const stamp = { type: 'io.nats.micro.v1.stats_response', version: '1.0.0', started: '2026-12-02T00:00:00Z' };
    answer('$SRV.STATS', JSON.stringify({ ...stamp, name: 'old-go', id: 'a1', num_requests: 3, num_errors: 1 }));
    answer(
      '$SRV.STATS',
      JSON.stringify({
        ...stamp,
        name: 'new-js',
        id: 'b1',
        endpoints: [
          { name: 'x', subject: 'svc.x', num_requests: 2, num_errors: 0 },
          { name: 'y', subject: 'svc.y', num_requests: 5, num_errors: 2 },
        ],
      }),
    );
    answer('$SRV.STATS', 'not json {');
    answer('$SRV.STATS', JSON.stringify({ name: 'no-id' }));
    await natsHandles(bus).nc.flush();

    // The collection window is generous for a loaded machine; nothing here measures it.
    const stats = await microServiceStats(bus, { waitMs: 1500 });
    expect(stats.map((s) => s.name)).toEqual(['new-js', 'old-go']);
    expect(stats.map(microServiceTotals)).toEqual([
      { requests: 7, errors: 2 },
      { requests: 3, errors: 1 },
    ]);
  });

  it('answers no services, rather than failing, when no service answers', async () => {
    expect(await microServiceStats(bus, { name: 'nobody-here', waitMs: 300 })).toEqual([]);
  });
});
