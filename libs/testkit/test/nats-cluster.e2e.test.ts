import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupAll, eventually, startNatsCluster } from '../src/index.js';

afterEach(async () => {
  await cleanupAll();
});

describe('startNatsCluster', () => {
  it('three routed JetStream nodes keep an R3 stream through the loss of its leader, and the node comes back with its data', async () => {
    const cluster = await startNatsCluster();
    expect(cluster.nodes).toHaveLength(3);
    const nc = await connect({ servers: cluster.url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'], num_replicas: 3 });
      const js = jetstream(nc);
      await js.publish('orders.placed', 'order-1');
      const info = await jsm.streams.info('ORDERS');
      expect(info.cluster?.replicas).toHaveLength(2);
      const leader = cluster.nodes.find((_, i) => info.cluster?.leader === `n${i + 1}`)!;

      await leader.kill();
      // Generous: a new stream leader is elected within a few seconds on a loaded machine.
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          await js.publish('orders.placed', 'order-2', { timeout: 1000 });
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      expect((await jsm.streams.info('ORDERS')).state.messages).toBe(2);

      await leader.restart();
      await cluster.waitForMetaLeader();
      const back = await connect({ servers: leader.url });
      try {
        const local = await jetstreamManager(back);
        // The returning node catches up with what was written while it was away.
        await eventually(async () => (await local.streams.info('ORDERS')).state.messages === 2, 30_000, 'the node to catch up');
      } finally {
        await back.close();
      }
    } finally {
      await nc.close();
    }
  }, 120_000);
});
