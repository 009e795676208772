import { DEFAULT_TEAM } from '@hermes/contracts';
import { Bus, type StreamTuning } from '@hermes/bus';
import type { TaskEvent } from '@hermes/contracts';
import { createLogger, type Logger } from '@hermes/telemetry';
import { natsHandles } from '@hermes/bus/internal';

export const silentLogger: Logger = createLogger({ service: 'runtime-test', level: 'silent' });

let prefixes = 0;

/** A subject prefix of its own per test, so streams and consumers of one test never meet another's. */
export function uniquePrefix(label: string): string {
  return `${label}${++prefixes}p${process.pid}`.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 32);
}

/** A Bus on the given server with a silent logger. */
export function connectBus(servers: string, prefix: string, tuning?: StreamTuning): Promise<Bus> {
  return Bus.connect({ servers, name: 'test', logger: silentLogger, prefix, ...(tuning ? { tuning } : {}) });
}

/** The payloads a stream holds right now (optionally only one subject's), oldest first. */
export async function storedPayloads(bus: Bus, stream: string, subject?: string): Promise<unknown[]> {
  const { state } = await natsHandles(bus).jsm.streams.info(stream);
  const out: unknown[] = [];
  if (state.messages === 0) return out;
  for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
    const m = await natsHandles(bus).jsm.streams.getMessage(stream, { seq });
    if (m && (subject === undefined || m.subject === subject)) out.push(m.json());
  }
  return out;
}

/** The events stored on one task's subject, oldest first. */
export async function taskEvents(bus: Bus, taskId: string): Promise<TaskEvent[]> {
  return (await storedPayloads(bus, bus.subjects.streams.taskEvents, bus.subjects.taskEvents(DEFAULT_TEAM, taskId))) as TaskEvent[];
}

/** The kinds (`started`, `step`, ...) of a list of task events. */
export function kinds(events: readonly TaskEvent[]): string[] {
  return events.map((e) => e.type.slice('io.hermes.task.'.length));
}

/** Polls until `check` returns a value (shared from the test kit). */
export { eventually } from '@hermes/testkit';
