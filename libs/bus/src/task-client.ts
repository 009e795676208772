import { randomUUID } from 'node:crypto';
import {
  contracts,
  DEFAULT_TEAM,
  TASK_SUBMIT_TYPE,
  TERMINAL_EVENT_KINDS,
  taskEventKind,
  taskIdFor,
  type TaskEvent,
  type TaskRequest,
  type TaskSubmitEvent,
  currentTraceparent,
} from '@hermes/contracts';
import { SpanKind } from '@opentelemetry/api';
import { inSpan } from '@hermes/telemetry';
import type { Bus } from './bus.js';
import { followSubject } from './event-follower.js';

export interface SubmitOptions {
  /** The team the task is for: the subject it is published on says so (see docs/deploy.md). */
  team: string;
  /** CloudEvents source naming the submitter, e.g. `/hermes/gateway/<user>`. */
  source: string;
  /** CloudEvents id; reuse it when retrying so the retry is the same task. Random by default. */
  id?: string;
}

export interface Submitted {
  taskId: string;
  eventId: string;
  /** True when JetStream dropped the publish as a duplicate of an earlier one. */
  duplicate: boolean;
}

/**
 * Publishes a task submission as a structured CloudEvent, de-duplicated by its task id, in a
 * `publish taskSubmit` PRODUCER span whose context both the NATS headers and the event's
 * `traceparent` extension carry: the task's trace continues from here.
 */
export async function submitTask(bus: Bus, data: TaskRequest, opts: SubmitOptions): Promise<Submitted> {
  const id = opts.id ?? randomUUID();
  const taskId = taskIdFor(opts.team, opts.source, id);
  const subject = bus.subjects.taskSubmit(opts.team);
  const attributes = {
    'messaging.system': 'nats',
    'messaging.destination.name': subject,
    'messaging.operation.type': 'send',
    'messaging.message.id': taskId,
    'hermes.task.id': taskId,
  };
  return inSpan('publish taskSubmit', { kind: SpanKind.PRODUCER, attributes }, async () => {
    const traceparent = currentTraceparent();
    const event: TaskSubmitEvent = {
      specversion: '1.0',
      type: TASK_SUBMIT_TYPE,
      source: opts.source,
      id,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      ...(traceparent ? { traceparent } : {}),
      data,
    };
    const ack = await bus.publish(contracts.taskSubmit, event, { subject, msgId: taskId });
    return { taskId, eventId: id, duplicate: ack?.duplicate ?? false };
  });
}

export interface TaskEventWithSeq {
  seq: number;
  event: TaskEvent;
}

/**
 * The last event stored on a task's subject (under its team's; no team is the default team), with its
 * stream sequence: the dispatcher reads a task's `waiting_for` and tells its announcements apart by
 * it, the gateway whether a finished task's stream has anything left to send.
 */
export async function lastTaskEvent(bus: Bus, task: { team?: string | undefined; task_id: string }): Promise<TaskEventWithSeq | undefined> {
  const last = await bus.storedMessage(bus.subjects.streams.taskEvents, { last_by_subj: bus.subjects.taskEvents(task.team ?? DEFAULT_TEAM, task.task_id) });
  return last ? { seq: last.seq, event: last.json<TaskEvent>() } : undefined;
}

/** Replays a task's events from the start (or after `afterSeq`), then follows live ones until a terminal event. */
export async function* followTaskEvents(
  bus: Bus,
  task: { team: string; task_id: string },
  opts: { afterSeq?: number; signal?: AbortSignal } = {},
): AsyncGenerator<TaskEventWithSeq> {
  const isTerminal = (v: unknown) => {
    const type = (v as { type?: unknown }).type;
    return typeof type === 'string' && TERMINAL_EVENT_KINDS.includes(taskEventKind({ type } as TaskEvent));
  };
  for await (const m of followSubject(bus, {
    stream: bus.subjects.streams.taskEvents,
    subject: bus.subjects.taskEvents(task.team, task.task_id),
    until: isTerminal,
    ...opts,
  })) {
    yield { seq: m.seq, event: m.value as TaskEvent };
  }
}
