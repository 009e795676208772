import { expect } from 'vitest';
import type { MsgHdrs } from '@nats-io/transport-node';
import { Bus, type StreamTuning } from '@hermes/bus';
import { DEFAULT_TEAM, TASK_SUBMIT_TYPE, taskIdFor, type TaskEvent, type TaskRequest, type TaskSubmitEvent, type TaskView } from '@hermes/contracts';
import { createLogger, type Logger } from '@hermes/telemetry';
import { natsHandles } from '@hermes/bus/internal';
import type { PlanSettings } from '../src/plan-scheduler.js';

/** Scheduler limits for the pure scheduler's tests: small back-offs, a 2 s takeover. */
export const testPlanSettings: PlanSettings = {
  maxSubtasks: 12,
  maxRetries: 2,
  maxReplans: 1,
  retryBaseMs: 100,
  subtaskTimeoutMs: 60_000,
  redispatchAfterMs: 2000,
  inputTimeoutMs: 10_000,
  inputTimeoutPolicy: 'fail',
  reviewRounds: 1,
};

export const silentLogger: Logger = createLogger({ service: 'dispatcher-test', level: 'silent' });

let prefixes = 0;

/** A subject prefix of its own per test, so streams, consumers and buckets of one test never meet another's. */
export function uniquePrefix(label: string): string {
  return `${label}${++prefixes}p${process.pid}`.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 32);
}

/** A Bus on the given server with a silent logger. */
export function connectBus(servers: string, prefix: string, tuning?: StreamTuning): Promise<Bus> {
  return Bus.connect({ servers, name: 'test', logger: silentLogger, prefix, ...(tuning ? { tuning } : {}) });
}

export interface StoredMessage {
  seq: number;
  subject: string;
  headers: MsgHdrs;
  value: unknown;
}

/** Every message a stream holds right now (optionally only one subject's), oldest first. */
export async function storedMessages(bus: Bus, stream: string, subject?: string): Promise<StoredMessage[]> {
  const { state } = await natsHandles(bus).jsm.streams.info(stream);
  const out: StoredMessage[] = [];
  if (state.messages === 0) return out;
  for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
    const m = await natsHandles(bus).jsm.streams.getMessage(stream, { seq });
    if (!m || (subject !== undefined && m.subject !== subject)) continue;
    out.push({ seq: m.seq, subject: m.subject, headers: m.header, value: m.json() });
  }
  return out;
}

/** Every runtime job both lanes hold right now (runtimeJobsAhead, then runtimeJobs), oldest first in each. */
export async function storedJobs(bus: Bus): Promise<StoredMessage[]> {
  const { streams } = bus.subjects;
  return [...(await storedMessages(bus, streams.runtimeJobsAhead)), ...(await storedMessages(bus, streams.runtimeJobs))];
}

/** The events stored on one task's subject (of `team`, by default the default team's), oldest first. */
export async function taskEvents(bus: Bus, taskId: string, team = DEFAULT_TEAM): Promise<TaskEvent[]> {
  const stored = await storedMessages(bus, bus.subjects.streams.taskEvents, bus.subjects.taskEvents(team, taskId));
  return stored.map((m) => m.value as TaskEvent);
}

/** The kinds (`accepted`, `completed`, ...) of a list of task events. */
export function kinds(events: readonly TaskEvent[]): string[] {
  return events.map((e) => e.type.slice('io.hermes.task.'.length));
}

let events = 0;

/** A valid structured-mode submission and the id of the task it names (`taskIdFor(DEFAULT_TEAM, source, id)`). */
export function submission(data: Partial<TaskRequest> = {}, attrs: Partial<TaskSubmitEvent> = {}): { event: TaskSubmitEvent; taskId: string } {
  const event: TaskSubmitEvent = {
    specversion: '1.0',
    type: TASK_SUBMIT_TYPE,
    source: '/dispatcher-test',
    id: `evt-${++events}-${process.pid}`,
    ...attrs,
    data: { user_id: 'u_alice', goal: 'summarise the release notes', ...data },
  };
  return { event, taskId: taskIdFor(DEFAULT_TEAM, event.source, event.id) };
}

/** A task state that satisfies TaskView. */
export function taskView(overrides: Partial<TaskView> = {}): TaskView {
  const now = new Date().toISOString();
  const taskId = overrides.task_id ?? `t_view${++events}`;
  return {
    task_id: taskId,
    user_id: 'u_alice',
    session_id: taskId,
    goal: 'summarise the release notes',
    status: 'running',
    created_at: now,
    updated_at: now,
    source_event: { source: '/dispatcher-test', id: taskId },
    attempts: 0,
    usage: { input_tokens: 0, output_tokens: 0 },
    ...overrides,
  };
}

/** Polls until `check` returns a value (shared from the test kit). */
export { eventually } from '@hermes/testkit';

/** What a promise is rejected with, checked to be an instance of `type` (fails the test if it resolves). */
export async function rejectionOf<E>(p: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  return err as E;
}
