import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus } from '@hermes/bus';
import { encodeJson, followSubject, followTaskEvents, type TaskEventWithSeq } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, makeTaskEvent, taskEventKind, type TaskEvent } from '@hermes/contracts';
import { cleanupAll, eventually, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { connectBus, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

let nats: NatsServerHandle;
const buses: Bus[] = [];

async function open(): Promise<Bus> {
  const bus = await connectBus(nats.url, { prefix: uniquePrefix('follow') });
  buses.push(bus);
  await bus.ensureStreams(['taskEvents']);
  return bus;
}

const source = '/hermes/test';
const accepted = (taskId: string) =>
  makeTaskEvent('accepted', {
    id: `${taskId}:accepted`,
    source,
    taskId,
    data: { task_id: taskId, user_id: 'u1', session_id: 's1', goal: 'g', source_event: {} },
  });
const started = (taskId: string, attempt = 1) =>
  makeTaskEvent('started', { id: `${taskId}:started:${attempt}`, source, taskId, data: { task_id: taskId, subtask_id: 'st1', attempt } });
const completed = (taskId: string) =>
  makeTaskEvent('completed', {
    id: `${taskId}:completed`,
    source,
    taskId,
    data: { task_id: taskId, result: { output: 'done' }, usage: { input_tokens: 1, output_tokens: 2 } },
  });

async function emit(bus: Bus, event: TaskEvent): Promise<number> {
  const ack = await bus.publish(contracts.taskEvents, event, { subject: bus.subjects.taskEvents(DEFAULT_TEAM, event.subject) });
  return ack!.seq;
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

const kinds = (events: TaskEventWithSeq[]) => events.map((e) => taskEventKind(e.event));

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('followTaskEvents', () => {
  it('replays the stored events, then follows live ones, and ends at the terminal event', async () => {
    const bus = await open();
    await emit(bus, accepted('t_a'));
    await emit(bus, accepted('t_other'));
    await emit(bus, started('t_a'));

    const following = collect(followTaskEvents(bus, { team: DEFAULT_TEAM, task_id: 't_a' }));
    await sleep(100);
    await emit(bus, started('t_other'));
    await emit(bus, started('t_a', 2));
    await emit(bus, completed('t_a'));
    await emit(bus, completed('t_other'));

    const events = await following;
    expect(kinds(events)).toEqual(['accepted', 'started', 'started', 'completed']);
    expect(events.every((e) => e.event.subject === 't_a')).toBe(true);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('afterSeq resumes right after the given stream sequence', async () => {
    const bus = await open();
    await emit(bus, accepted('t_b'));
    const startedSeq = await emit(bus, started('t_b'));
    await emit(bus, started('t_b', 2));
    await emit(bus, completed('t_b'));

    const events = await collect(followTaskEvents(bus, { team: DEFAULT_TEAM, task_id: 't_b' }, { afterSeq: startedSeq }));

    expect(kinds(events)).toEqual(['started', 'completed']);
    expect(events[0]!.seq).toBeGreaterThan(startedSeq);
    expect((events[0]!.event.data as { attempt: number }).attempt).toBe(2);
  });

  it('an aborted signal ends a follow that has no terminal event yet', async () => {
    const bus = await open();
    await emit(bus, accepted('t_c'));
    const abort = new AbortController();
    const seen: string[] = [];

    const following = (async () => {
      for await (const e of followTaskEvents(bus, { team: DEFAULT_TEAM, task_id: 't_c' }, { signal: abort.signal })) {
        seen.push(taskEventKind(e.event));
        if (seen.length === 1) abort.abort();
      }
    })();

    await expect(Promise.race([following.then(() => 'ended'), sleep(3_000).then(() => 'still running')])).resolves.toBe('ended');
    expect(seen).toEqual(['accepted']);
  });
});

describe('followSubject', () => {
  it('yields undecodable bodies instead of stopping, and stops where `until` says', async () => {
    const bus = await open();
    const subject = bus.subjects.taskEvents(DEFAULT_TEAM, 't_raw');
    await natsHandles(bus).js.publish(subject, encodeJson({ n: 1 }));
    await natsHandles(bus).js.publish(subject, new TextEncoder().encode('{broken'));
    await natsHandles(bus).js.publish(subject, encodeJson({ n: 2, last: true }));
    await natsHandles(bus).js.publish(subject, encodeJson({ n: 3 }));

    const got = await collect(followSubject(bus, { stream: bus.subjects.streams.taskEvents, subject, until: (v) => (v as { last?: boolean }).last === true }));

    expect(got.map((m) => m.value)).toEqual([{ n: 1 }, { undecodable: expect.stringContaining('not valid JSON') }, { n: 2, last: true }]);
    expect(got.map((m) => m.subject)).toEqual([subject, subject, subject]);
  });
});

describe('following across a server restart', () => {
  it('picks up where it was, without repeating or losing events', async () => {
    const bus = await open();
    await emit(bus, accepted('t_r'));
    const seen: string[] = [];
    const following = (async () => {
      for await (const e of followTaskEvents(bus, { team: DEFAULT_TEAM, task_id: 't_r' })) seen.push(taskEventKind(e.event));
    })();
    await emit(bus, started('t_r'));
    await eventually(() => seen.length >= 2, 5_000, 'the two stored events');

    const reconnected = (async () => {
      for await (const status of natsHandles(bus).nc.status()) if (status.type === 'reconnect') return;
    })();
    await nats.restart();
    await reconnected;
    await emit(bus, started('t_r', 2));
    await emit(bus, completed('t_r'));

    await expect(Promise.race([following.then(() => 'ended'), sleep(10_000).then(() => 'still running')])).resolves.toBe('ended');
    expect(seen).toEqual(['accepted', 'started', 'started', 'completed']);
  });
});
