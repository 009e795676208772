import { existsSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { fileURLToPath } from 'node:url';
import { Bus, type BusOptions, type WorkConsumer } from '@hermes/bus';
import { DeadLetter, validate, type RuntimeJob } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { natsHandles } from '@hermes/bus/internal';

let prefixes = 0;

/** A subject prefix of its own per test, so streams and consumers of one test never meet another's. */
export function uniquePrefix(label: string): string {
  return `${label}${++prefixes}${process.pid}`.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 32);
}

/** A Bus on the given server with a silent logger. */
export function connectBus(servers: string, opts: Partial<BusOptions> = {}): Promise<Bus> {
  return Bus.connect({ servers, name: 'bus-test', logger: createLogger({ service: 'bus-test', level: 'silent' }), ...opts });
}

/** A RuntimeJob that satisfies its contract. */
export function runtimeJob(jobId: string): RuntimeJob {
  return { job_id: jobId, task_id: 't1', subtask_id: 's1', user_id: 'u1', session_id: 'sess1', goal: 'say hi', model_role: 'worker' };
}

// One polling helper for every package's tests.
export { eventually } from '@hermes/testkit';

/** Absolute path of a fixture script; fixtures import the built `@hermes/bus`, so dist/ must exist. */
export function fixture(name: string): string {
  const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  if (!existsSync(dist)) throw new Error(`${dist} is missing: build first (npx tsc -b libs/bus/tsconfig.json, or npm test at the root)`);
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** Every dead-letter record on the bus's dead-letter stream, oldest first, each checked against its contract. */
export async function storedDeadLetters(bus: Bus): Promise<DeadLetter[]> {
  const stream = bus.subjects.streams.deadLetters;
  const info = await natsHandles(bus)
    .jsm.streams.info(stream)
    .catch(() => undefined);
  const out: DeadLetter[] = [];
  if (!info || info.state.messages === 0) return out;
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await natsHandles(bus).jsm.streams.getMessage(stream, { seq });
    const checked = validate(DeadLetter, m?.json());
    if (!checked.ok) throw new Error(`record ${seq} breaks its contract: ${JSON.stringify(checked.issues)}`);
    out.push(checked.value);
  }
  return out;
}

/**
 * One nats-server for the test file (started before its tests), and at the end the work consumers
 * and buses its tests registered stopped and drained, then every process the kit started.
 */
export function natsForFile(): { readonly nats: NatsServerHandle; buses: Bus[]; consumers: WorkConsumer[] } {
  const state = { nats: undefined as unknown as NatsServerHandle, buses: [] as Bus[], consumers: [] as WorkConsumer[] };
  beforeAll(async () => {
    state.nats = await startNatsServer();
  });
  afterAll(async () => {
    await Promise.all(state.consumers.map((c) => c.stop(100)));
    await Promise.all(state.buses.map((b) => b.drain().catch(() => {})));
    await cleanupAll();
  });
  return state;
}
