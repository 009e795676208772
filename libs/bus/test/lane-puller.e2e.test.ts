import { describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { startWorkConsumer, type WorkConsumer } from '@hermes/bus';
import { natsHandles } from '@hermes/bus/internal';
import { contracts } from '@hermes/contracts';
import { connectBus, eventually, runtimeJob, storedDeadLetters, natsForFile, uniquePrefix } from './support.js';

const file = natsForFile();
const { buses, consumers } = file;

/** A bus with both runtime job lanes declared. */
async function lanesBus(label: string): Promise<Bus> {
  const bus = await connectBus(file.nats.url, { prefix: uniquePrefix(label) });
  buses.push(bus);
  await bus.ensureStreams(['runtimeJobs', 'runtimeJobsAhead']);
  await bus.ensureConsumers(['runtimeJobs', 'runtimeJobsAhead']);
  return bus;
}

const laneOpts = (bus: Bus, concurrency: number) => ({
  stream: bus.subjects.streams.runtimeJobs,
  durable: bus.subjects.consumers.runtimeJobs,
  ahead: { stream: bus.subjects.streams.runtimeJobsAhead, durable: bus.subjects.consumers.runtimeJobsAhead },
  concurrency,
  heartbeatMs: 200,
});

/** A handler that records start order and holds each job until the test lets it go. */
function gatedHandler() {
  const started: string[] = [];
  const finished: string[] = [];
  const gates = new Map<string, () => void>();
  let running = 0;
  let mostRunning = 0;
  const handler = async (msg: { data: Uint8Array }) => {
    const id = (JSON.parse(new TextDecoder().decode(msg.data)) as { job_id: string }).job_id;
    started.push(id);
    running++;
    mostRunning = Math.max(mostRunning, running);
    await new Promise<void>((r) => gates.set(id, r));
    running--;
    finished.push(id);
  };
  const release = (id: string) => {
    const g = gates.get(id);
    if (!g) throw new Error(`${id} is not running (started: ${started.join(', ')})`);
    gates.delete(id);
    g();
  };
  return { handler, started, finished, release, mostRunning: () => mostRunning, runningIds: () => [...gates.keys()] };
}

async function ackPending(bus: Bus): Promise<number> {
  const { jsm } = natsHandles(bus);
  const [a, b] = await Promise.all([
    jsm.consumers.info(bus.subjects.streams.runtimeJobs, bus.subjects.consumers.runtimeJobs),
    jsm.consumers.info(bus.subjects.streams.runtimeJobsAhead, bus.subjects.consumers.runtimeJobsAhead),
  ]);
  return a.num_ack_pending + b.num_ack_pending;
}

const track = async (c: Promise<WorkConsumer>) => {
  const consumer = await c;
  consumers.push(consumer);
  return consumer;
};

describe('a work consumer with an ahead lane', () => {
  it('starts every ahead job before any queued main job as slots free, and never runs more than its concurrency', async () => {
    const bus = await lanesBus('lanes-order');
    const g = gatedHandler();
    for (let i = 1; i <= 8; i++) await bus.publish(contracts.runtimeJobs, runtimeJob(`main-${i}`));
    await track(startWorkConsumer(bus, laneOpts(bus, 2), g.handler));
    await eventually(() => (g.started.length === 2 ? true : undefined), 5_000, 'two main jobs started');
    expect(g.started).toEqual(['main-1', 'main-2']);

    // Work of tasks already running arrives while the main queue is six deep.
    for (const id of ['ahead-1', 'ahead-2', 'ahead-3']) await bus.publish(contracts.runtimeJobsAhead, runtimeJob(id));
    // Give the pulls time to settle: at most one message beyond the two slots may be taken.
    await new Promise((r) => setTimeout(r, 300));
    expect(await ackPending(bus)).toBeLessThanOrEqual(3);

    for (let n = 3; n <= 11; n++) {
      g.release(g.runningIds()[0]!);
      await eventually(() => (g.started.length === n ? true : undefined), 5_000, `job ${n} started`);
    }
    g.runningIds().forEach(g.release);
    await eventually(() => (g.finished.length === 11 ? true : undefined), 5_000, 'all finished');

    // One main job may have been taken into the last free slot before the ahead jobs were published,
    // never after: each ahead job starts before every main job still queued when it arrived.
    const firstAhead = g.started.indexOf('ahead-1');
    expect(g.started.slice(firstAhead, firstAhead + 3)).toEqual(['ahead-1', 'ahead-2', 'ahead-3']);
    expect(firstAhead).toBeLessThanOrEqual(3);
    expect(new Set(g.started).size).toBe(11);
    expect(g.mostRunning()).toBe(2);
    await eventually(async () => ((await ackPending(bus)) === 0 ? true : undefined), 5_000, 'all acked');
  });

  it('at concurrency 1 with both lanes deep runs one job at a time, ahead first, each once', async () => {
    const bus = await lanesBus('lanes-one');
    const g = gatedHandler();
    for (let i = 1; i <= 4; i++) await bus.publish(contracts.runtimeJobs, runtimeJob(`main-${i}`));
    for (let i = 1; i <= 4; i++) await bus.publish(contracts.runtimeJobsAhead, runtimeJob(`ahead-${i}`));
    await track(startWorkConsumer(bus, laneOpts(bus, 1), g.handler));
    for (let n = 1; n <= 8; n++) {
      await eventually(() => (g.started.length === n ? true : undefined), 5_000, `job ${n} started`);
      // One running, at most one held with heartbeats.
      expect(await ackPending(bus)).toBeLessThanOrEqual(2);
      g.release(g.runningIds()[0]!);
    }
    await eventually(() => (g.finished.length === 8 ? true : undefined), 5_000, 'all finished');
    expect(g.mostRunning()).toBe(1);
    // The main lane opens only once the ahead lane's consumer has nothing waiting.
    expect(g.started.slice(0, 4)).toEqual(['ahead-1', 'ahead-2', 'ahead-3', 'ahead-4']);
    expect(g.started.slice(4)).toEqual(['main-1', 'main-2', 'main-3', 'main-4']);
  });

  it('starts a main job promptly while the ahead lane is empty, and an ahead job while the main lane waits', async () => {
    const bus = await lanesBus('lanes-idle');
    const g = gatedHandler();
    await track(startWorkConsumer(bus, laneOpts(bus, 4), g.handler));
    // Both lanes idle with their pulls open: each job is taken by the pull already waiting. The 4 s
    // deadlines sit below the main lane's 5 s pull expiry (a lane left closed would be found only
    // at the next pull), far above the one round trip a handoff takes even on a loaded machine.
    await bus.publish(contracts.runtimeJobs, runtimeJob('main-1'));
    await eventually(() => (g.started.includes('main-1') ? true : undefined), 4_000, 'the main job');
    await bus.publish(contracts.runtimeJobsAhead, runtimeJob('ahead-1'));
    await eventually(() => (g.started.includes('ahead-1') ? true : undefined), 4_000, 'the ahead job');
    await bus.publish(contracts.runtimeJobs, runtimeJob('main-2'));
    await eventually(() => (g.started.includes('main-2') ? true : undefined), 4_000, 'the second main job');
    g.runningIds().forEach(g.release);
  });

  it('hands a held job back when it stops: another consumer runs it, nothing is lost or dead-lettered', async () => {
    const bus = await lanesBus('lanes-stop');
    const first = gatedHandler();
    const consumer = await startWorkConsumer(bus, { ...laneOpts(bus, 1) }, first.handler);
    await bus.publish(contracts.runtimeJobs, runtimeJob('main-1'));
    await eventually(() => (first.started.length === 1 ? true : undefined), 5_000, 'the first job');
    // Both lanes' pulls were opened for the one slot; a job on each may now be taken and held.
    await bus.publish(contracts.runtimeJobsAhead, runtimeJob('ahead-1'));
    await bus.publish(contracts.runtimeJobs, runtimeJob('main-2'));
    await new Promise((r) => setTimeout(r, 300));
    const stopping = consumer.stop(200);
    first.release('main-1');
    await stopping;

    const second = gatedHandler();
    await track(startWorkConsumer(bus, laneOpts(bus, 2), second.handler));
    await eventually(() => (second.started.length === 2 ? true : undefined), 5_000, 'the other two jobs elsewhere');
    second.runningIds().forEach(second.release);
    await eventually(async () => ((await ackPending(bus)) === 0 ? true : undefined), 5_000, 'all acked');
    expect([...first.finished, ...second.finished].sort()).toEqual(['ahead-1', 'main-1', 'main-2']);
    expect(await storedDeadLetters(bus)).toEqual([]);
  });
});
