import { DEFAULT_TEAM } from '@hermes/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { cleanupAll, startNatsCluster, type NatsClusterHandle } from '@hermes/testkit';
import { connectBus, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

let cluster: NatsClusterHandle;
const buses: Bus[] = [];

beforeAll(async () => {
  cluster = await startNatsCluster();
}, 60_000);

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('HERMES_JS_REPLICAS on a 3-node cluster', () => {
  it('streams and buckets first declared at R1 are raised to R3 in place when the setting grows, keeping their data', async () => {
    const prefix = uniquePrefix('repl');
    const r1 = await connectBus(cluster.url, { prefix });
    buses.push(r1);
    await r1.ensureStreams(['taskSubmit', 'taskEvents']);
    const tasks = await r1.kv('tasks');
    await tasks.put('t1', '{"kept":true}');
    await natsHandles(r1).js.publish(r1.subjects.taskEvents(DEFAULT_TEAM, 't1'), '{"kept":true}');
    expect((await natsHandles(r1).jsm.streams.info(r1.subjects.streams.taskEvents)).config.num_replicas).toBe(1);

    const r3 = await connectBus(cluster.url, { prefix, tuning: { replicas: 3 } });
    buses.push(r3);
    await r3.ensureStreams(['taskSubmit', 'taskEvents']);
    const again = await r3.kv('tasks');

    for (const stream of [r3.subjects.streams.taskSubmit, r3.subjects.streams.taskEvents, `KV_${r3.subjects.buckets.tasks}`]) {
      const info = await natsHandles(r3).jsm.streams.info(stream);
      expect(info.config.num_replicas, stream).toBe(3);
    }
    expect((await again.get('t1'))?.string()).toBe('{"kept":true}');
    expect((await natsHandles(r3).jsm.streams.info(r3.subjects.streams.taskEvents)).state.messages).toBe(1);
    // Declaring again at R3, or opening at R1 later, changes nothing.
    await r3.ensureStreams(['taskEvents']);
    await r1.kv('tasks');
    expect((await natsHandles(r3).jsm.streams.info(`KV_${r3.subjects.buckets.tasks}`)).config.num_replicas).toBe(3);
  }, 60_000);
});
