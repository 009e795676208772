import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupAll, eventually, freePort, startNatsCluster } from '../src/index.js';
import { isRunning } from './process-state.js';

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

  it('starts again on new ports when a chosen port is taken before its node binds it', async () => {
    // Another process holds the port handed out second: node n1's route port.
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen({ port: 0, host: '127.0.0.1' }, resolve));
    const taken = (holder.address() as { port: number }).port;
    let handedOut = 0;
    const choosePort = async () => (++handedOut === 2 ? taken : freePort());
    try {
      const cluster = await startNatsCluster({ choosePort });
      // Six ports for the try that met the taken one, six for the one that started (and six more
      // for any try that started but elected no leader, which a loaded machine can cause).
      expect(handedOut % 6).toBe(0);
      expect(handedOut).toBeGreaterThanOrEqual(12);
      expect(cluster.nodes.every((n) => n.logs.some((l) => /Listening for route connections/.test(l)) && !n.logs.some((l) => l.includes(String(taken))))).toBe(
        true,
      );
      // The nodes of the failed try were stopped: only the cluster's three are left.
      expect(natsServerChildren().filter(isRunning).sort()).toEqual(cluster.nodes.map((n) => n.pid).sort());
      const nc = await connect({ servers: cluster.url.split(',') });
      try {
        const info = await (await jetstreamManager(nc)).streams.add({ name: 'R3', subjects: ['r3.>'], num_replicas: 3 });
        expect(info.cluster?.replicas).toHaveLength(2);
      } finally {
        await nc.close();
      }
    } finally {
      holder.close();
    }
  }, 120_000);
});

/** Pids of the nats-server processes this test process started. */
function natsServerChildren(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return comm === 'nats-server' && ppid === process.pid ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}
