import { fileURLToPath } from 'node:url';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitTask, type Bus } from '@hermes/bus';
import { DEFAULT_TEAM, TaskRejectedEvent, validate, type TaskEvent, type TaskEventDataByKind } from '@hermes/contracts';
import { cleanupAll, freePort, startChildService, startNatsServer, type ChildService } from '@hermes/testkit';
import { hostileSubmissions, type HostileSubmission } from './hostile-submissions.js';
import { connectBus, eventually, storedMessages, storedJobs, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

// The built dispatcher as a process of its own (npm test builds first), as a Deployment runs it.
const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const SEED = Number(process.env.HERMES_FUZZ_SEED ?? Date.now() % 1_000_000);

let bus: Bus;
let dispatcher: ChildService;
let healthPort: number;

beforeAll(async () => {
  const nats = await startNatsServer();
  const prefix = uniquePrefix('fuzz');
  bus = await connectBus(nats.url, prefix);
  healthPort = await freePort();
  dispatcher = await startChildService({
    name: 'dispatcher',
    entry,
    env: { NATS_URL: nats.url, HERMES_SUBJECT_PREFIX: prefix, HEALTH_PORT: String(healthPort), PLAN_MODE: 'single', LOG_LEVEL: 'error' },
    healthPort,
    readyTimeoutMs: 60_000,
  });
}, 90_000);

afterAll(async () => {
  await bus?.drain();
  await cleanupAll();
});

/** Publishes at most `width` messages at a time, each awaiting its JetStream ack. */
async function publishAll(messages: readonly HostileSubmission[], width = 32): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < messages.length) {
      const m = messages[next++]!;
      const h = natsHeaders();
      for (const [k, v] of Object.entries(m.headers)) h.set(k, v);
      await natsHandles(bus).js.publish(bus.subjects.taskSubmit(DEFAULT_TEAM), m.body, { headers: h, timeout: 30_000 });
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
}

describe('dispatcher intake under hostile submissions', () => {
  it('rejects every hostile submission with a structured event, keeps running, and accepts a good task afterwards', async () => {
    const started = Date.now();
    const hostile = hostileSubmissions(SEED);
    const byTask = new Map(hostile.filter((h) => h.taskId).map((h) => [h.taskId!, h]));
    const catchAll = hostile.filter((h) => !h.taskId);
    const rejections = new Map<string, TaskEvent>();
    const unnamed: TaskEvent[] = [];
    const onEvent = (into: (e: TaskEvent) => void) => (_err: unknown, msg: { json<T>(): T }) => into(msg.json<TaskEvent>());
    const named = natsHandles(bus).nc.subscribe(bus.subjects.taskEventsAll, { callback: onEvent((e) => void rejections.set(e.subject ?? '', e)) });
    const anonymous = natsHandles(bus).nc.subscribe(bus.subjects.taskRejected(DEFAULT_TEAM), { callback: onEvent((e) => void unnamed.push(e)) });
    await natsHandles(bus).nc.flush();

    await publishAll(hostile);
    await eventually(() => rejections.size >= byTask.size && unnamed.length >= catchAll.length, 60_000, 'a rejection for every hostile submission').catch(
      () => undefined,
    );

    const missing = [...byTask].filter(([taskId]) => !rejections.has(taskId)).map(([, h]) => h.kind);
    expect(missing.slice(0, 10), `${missing.length} submissions got no rejection`).toEqual([]);
    expect(unnamed.length).toBeGreaterThanOrEqual(catchAll.length);
    for (const [taskId, h] of byTask) {
      const event = rejections.get(taskId)!;
      expect(validate(TaskRejectedEvent, event).ok, h.kind).toBe(true);
      const data = event.data as TaskEventDataByKind['rejected'];
      expect(data.error.code, h.kind).toBe(h.code);
      expect(data.error.retryable, h.kind).toBe(false);
      expect(data.issues.length, h.kind).toBeGreaterThan(0);
      if (h.limit) expect(data.error.details, h.kind).toMatchObject({ limit: h.limit, path: expect.any(String), max: expect.any(Number) });
    }
    for (const event of unnamed) expect(validate(TaskRejectedEvent, event).ok).toBe(true);

    // The same process is still there, ready, and never hit a stack overflow.
    const exited = await Promise.race([dispatcher.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 50))]);
    expect(exited).toBe(false);
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200);
    expect(dispatcher.logs.join('\n')).not.toMatch(/RangeError|Maximum call stack|uncaught/i);

    // Nothing hostile is left in the intake's ack-pending slots, and a normal task goes through.
    const good = await submitTask(
      bus,
      { user_id: 'u_good', goal: 'a normal task after the storm', inputs: { n: 1 } },
      { team: DEFAULT_TEAM, source: 'urn:fuzz-good' },
    );
    const accepted = await eventually(
      async () => {
        const events = await storedMessages(bus, bus.subjects.streams.taskEvents, bus.subjects.taskEvents(DEFAULT_TEAM, good.taskId));
        return events.find((m) => (m.value as TaskEvent).type.endsWith('.accepted'));
      },
      30_000,
      'the good task accepted',
    );
    expect(accepted).toBeDefined();
    const jobs = await storedJobs(bus);
    expect(jobs.some((m) => (m.value as { task_id?: string }).task_id === good.taskId)).toBe(true);

    named.unsubscribe();
    anonymous.unsubscribe();
    const pending = await natsHandles(bus).jsm.consumers.info(bus.subjects.streams.taskSubmit, bus.subjects.consumers.dispatcherIntake);
    expect(pending.num_ack_pending).toBe(0);
    console.info(
      `intake fuzz: ${hostile.length} hostile submissions (seed ${SEED}: ${byTask.size} naming a task, ${catchAll.length} not) rejected in ${Date.now() - started} ms`,
    );
  }, 120_000);
});
