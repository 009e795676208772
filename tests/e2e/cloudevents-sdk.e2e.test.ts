import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudEvent, HTTP } from 'cloudevents';
import { headers as natsHeaders, type Msg } from '@nats-io/transport-node';
import {
  DEFAULT_TEAM,
  PUBLISHED_ASYNCAPI_URL,
  TASK_SUBMIT_TYPE,
  TERMINAL_EVENT_KINDS,
  taskEventKind,
  taskIdFor,
  type TaskEvent,
  type TaskRequest,
} from '@hermes/contracts';
import { natsHandles } from '@hermes/bus/internal';
import { startStack, type Stack } from './stack.js';

// Events as the official CloudEvents SDK makes them, through the real intake (dispatcher on a
// test nats-server, the whole stack behind it), and Hermes's own events read back with the SDK.
// The SDK has no NATS binding; its HTTP binding's headers and body are what the NATS binding
// carries too (ce-* headers in binary mode, the JSON event as the body in structured mode).

const DEPLOYMENT = 'https://hermes.example.test/prod';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { HERMES_EVENT_SOURCE: DEPLOYMENT } });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

interface RawEvent {
  body: string;
  traceparentHeader: string;
  event: TaskEvent;
}

/**
 * Publishes an SDK message on the submit subject and collects the task's events as raw NATS
 * messages until the terminal one. Deadline generous: a task runs through five processes on a
 * loaded 2-core machine.
 */
async function submitAndCollect(message: { headers: Record<string, unknown>; body: unknown }, taskId: string): Promise<RawEvent[]> {
  const { nc, js } = natsHandles(stack.bus);
  const events: RawEvent[] = [];
  const sub = nc.subscribe(stack.bus.subjects.taskEvents(DEFAULT_TEAM, taskId));
  const done = (async () => {
    for await (const m of sub as AsyncIterable<Msg>) {
      const event = m.json<TaskEvent>();
      events.push({ body: m.string(), traceparentHeader: m.headers?.get('traceparent') ?? '', event });
      if (TERMINAL_EVENT_KINDS.includes(taskEventKind(event))) break;
    }
  })();
  const h = natsHeaders();
  for (const [k, v] of Object.entries(message.headers)) h.set(k, String(v));
  const body = typeof message.body === 'string' ? message.body : Buffer.from(message.body as Uint8Array);
  await js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), body, { headers: h, msgID: taskId });
  const timer = setTimeout(() => sub.unsubscribe(), 30_000);
  await done;
  clearTimeout(timer);
  return events;
}

function submission(goal: string, attrs: Record<string, unknown> = {}): { event: CloudEvent<unknown>; taskId: string; request: TaskRequest } {
  const request: TaskRequest = { user_id: 'ce-sdk-user', goal };
  const source = '/teams/sdk-users';
  const id = randomUUID();
  const event = new CloudEvent<unknown>({ specversion: '1.0', type: TASK_SUBMIT_TYPE, source, id, data: request, traceparent: TRACEPARENT, ...attrs });
  return { event, taskId: taskIdFor(DEFAULT_TEAM, source, id), request };
}

const kindsOf = (events: RawEvent[]) => events.map((e) => taskEventKind(e.event));

describe('CloudEvents SDK events are accepted by the intake', () => {
  it('a structured-mode event with datacontenttype "application/json; charset=utf-8" completes', async () => {
    const { event, taskId } = submission('sdk structured with charset', { datacontenttype: 'application/json; charset=utf-8' });
    const message = HTTP.structured(event);
    expect(JSON.parse(message.body as string).datacontenttype).toBe('application/json; charset=utf-8');
    const events = await submitAndCollect(message, taskId);
    expect(kindsOf(events)).toEqual(['accepted', 'started', 'step', 'completed']);
  });

  it('a binary-mode event (ce-* headers, content-type with charset) completes', async () => {
    const { event, taskId } = submission('sdk binary mode');
    const message = HTTP.binary(event);
    expect(message.headers['ce-id']).toBe(event.id);
    expect(String(message.headers['content-type'])).toMatch(/charset=utf-8/);
    const events = await submitAndCollect(message, taskId);
    expect(kindsOf(events)).toEqual(['accepted', 'started', 'step', 'completed']);
  });

  it('a structured-mode event with its data as data_base64 completes with the decoded goal', async () => {
    const request: TaskRequest = { user_id: 'ce-sdk-user', goal: 'sdk data_base64' };
    const { event, taskId } = submission('unused', { data: Buffer.from(JSON.stringify(request)), datacontenttype: 'application/json' });
    const message = HTTP.structured(event);
    const wire = JSON.parse(message.body as string) as Record<string, unknown>;
    expect(wire.data_base64).toBeTypeOf('string');
    expect(wire).not.toHaveProperty('data');
    const events = await submitAndCollect(message, taskId);
    expect(kindsOf(events)).toEqual(['accepted', 'started', 'step', 'completed']);
    expect(events[0]!.event.data).toMatchObject({ goal: 'sdk data_base64', user_id: 'ce-sdk-user' });
  });

  it('data_base64 that is not JSON is rejected with an issue, not a crash', async () => {
    const { event, taskId } = submission('unused', { data: Buffer.from('not json {'), datacontenttype: 'application/json' });
    const events = await submitAndCollect(HTTP.structured(event), taskId);
    expect(kindsOf(events)).toEqual(['rejected']);
    expect(events[0]!.event.data).toMatchObject({ error: { code: 'invalid_task_event' }, issues: [expect.objectContaining({ keyword: 'json' })] });
  });

  it('a charset other than UTF-8 is rejected naming datacontenttype', async () => {
    const { event, taskId } = submission('sdk latin-1', { datacontenttype: 'application/json; charset=iso-8859-1' });
    const events = await submitAndCollect(HTTP.structured(event), taskId);
    expect(kindsOf(events)).toEqual(['rejected']);
    expect(events[0]!.event.data).toMatchObject({ issues: [expect.objectContaining({ path: '/datacontenttype' })] });
  });
});

describe("Hermes's events parse and validate with the CloudEvents SDK", () => {
  it('every event of a task is a valid CloudEvent with an absolute source, its dataschema and the trace extension', async () => {
    const { event, taskId } = submission('sdk reads hermes events');
    const events = await submitAndCollect(HTTP.binary(event), taskId);
    expect(kindsOf(events)).toEqual(['accepted', 'started', 'step', 'completed']);
    for (const raw of events) {
      const parsed = HTTP.toEvent({ headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' }, body: raw.body }) as CloudEvent<unknown>;
      expect(parsed.validate()).toBe(true);
      expect(parsed.id).toBe(raw.event.id);
      // Absolute, with the deployment's base and the emitting service.
      expect(new URL(parsed.source).href).toBe(parsed.source);
      expect(parsed.source).toMatch(new RegExp(`^${DEPLOYMENT}/(dispatcher|runtime)$`));
      const kind = taskEventKind(raw.event);
      expect(parsed.dataschema).toBe(`${PUBLISHED_ASYNCAPI_URL}#/components/schemas/Task${kind[0]!.toUpperCase()}${kind.slice(1)}Data`);
      // The distributed-tracing extension continues the submitter's trace, and equals the NATS header.
      expect(parsed['traceparent']).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-0[01]$`));
      expect(raw.traceparentHeader).toBe(parsed['traceparent']);
    }
    expect(events.map((e) => e.event.source)).toEqual([
      `${DEPLOYMENT}/dispatcher`,
      `${DEPLOYMENT}/runtime`,
      `${DEPLOYMENT}/runtime`,
      `${DEPLOYMENT}/dispatcher`,
    ]);
  });
});
