import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { DEFAULT_TEAM, contracts, taskEventData, taskIdFor, type TaskEvent } from '@hermes/contracts';
import { encodeJson, request, submitTask } from '@hermes/bus';
import { lastUserMessageText, eventually } from '@hermes/testkit';
import { API_KEY, replicasOf, runtimeHolding, startStack, type Stack } from './stack.js';
import { collectTaskEvents, kinds, readSse } from './events.js';
import { natsHandles } from '@hermes/bus/internal';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ runtimeReplicas: 2, runtimeAckWaitMs: 2000 });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

const outputOf = (events: TaskEvent[]) => {
  const done = events.at(-1);
  return done ? taskEventData(done, 'completed')?.result.output : undefined;
};

describe('walking skeleton: one task through all five services', () => {
  it('a CloudEvent published on NATS ends in completed with the model answer', async () => {
    const { taskId } = await submitTask(stack.bus, { user_id: 'bob', goal: 'say hello from NATS' }, { team: DEFAULT_TEAM, source: '/e2e/nats', id: 'nats-1' });
    const events = await collectTaskEvents(stack.bus, taskId);
    expect(kinds(events)).toEqual(['accepted', 'started', 'step', 'completed']);
    expect(outputOf(events)).toBe('Scripted answer: say hello from NATS');

    const view = await request(stack.bus, contracts.taskGet, { task_id: taskId });
    expect(view).toMatchObject({ status: 'completed', user_id: 'bob', result: { output: 'Scripted answer: say hello from NATS' }, attempts: 1 });
    expect(view.usage.input_tokens).toBeGreaterThan(0);

    // The runtime wrote the turn to the memory service (Redis), under the task's session.
    const session = await request(stack.bus, contracts.sessionRead, { user_id: 'bob', session_id: view.session_id });
    expect(session.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'say hello from NATS'],
      ['assistant', 'Scripted answer: say hello from NATS'],
    ]);
  });

  it('a task submitted over HTTP shows the same events over SSE as on the bus', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ goal: 'say hello from HTTP', metadata: { ticket: 'OPS-1234' } }),
    });
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };

    const sse = await fetch(`${stack.gatewayUrl}/v1/tasks/${task_id}/events`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/text\/event-stream/);
    const sseEvents = await readSse(sse);
    const busEvents = await collectTaskEvents(stack.bus, task_id);
    expect(sseEvents.map((e) => e.event)).toEqual(kinds(busEvents));
    expect(sseEvents.map((e) => (e.data as TaskEvent).id)).toEqual(busEvents.map((e) => e.id));
    expect(outputOf(busEvents)).toBe('Scripted answer: say hello from HTTP');

    const status = await fetch(`${stack.gatewayUrl}/v1/tasks/${task_id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(status.status).toBe(200);
    // The submitter's labels come back with the task.
    expect(await status.json()).toMatchObject({ task_id, user_id: 'alice', status: 'completed', options: { metadata: { ticket: 'OPS-1234' } } });
  });

  it('the same Nats-Msg-Id published twice yields one task and one LLM call', async () => {
    const event = {
      specversion: '1.0',
      type: 'io.hermes.task.submit',
      source: '/e2e/dup',
      id: 'dup-1',
      data: { user_id: 'carol', goal: 'count me once' },
    };
    const taskId = taskIdFor(DEFAULT_TEAM, event.source, event.id);
    const first = await natsHandles(stack.bus).js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson(event), { msgID: taskId });
    const second = await natsHandles(stack.bus).js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson(event), { msgID: taskId });
    expect(first.duplicate).toBe(false);
    expect(second.duplicate).toBe(true);
    // Even a resend with another Nats-Msg-Id (say, after the window) names the same task.
    await natsHandles(stack.bus).js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson(event), { msgID: `${taskId}-late` });

    const events = await collectTaskEvents(stack.bus, taskId);
    expect(kinds(events)).toEqual(['accepted', 'started', 'step', 'completed']);
    await new Promise((r) => setTimeout(r, 500));
    const calls = stack.llm.requests.filter((r) => lastUserMessageText(r.body) === 'count me once');
    expect(calls).toHaveLength(1);
  });

  it('a malformed event is rejected with its errors and the services keep serving', async () => {
    const bad = { specversion: '1.0', type: 'io.hermes.task.submit', source: '/e2e/bad', id: 'bad-1', data: { user_id: 'dave', priority: 'urgent' } };
    await natsHandles(stack.bus).js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson(bad));
    const rejected = await collectTaskEvents(stack.bus, taskIdFor(DEFAULT_TEAM, bad.source, bad.id));
    expect(kinds(rejected)).toEqual(['rejected']);
    const data = taskEventData(rejected[0]!, 'rejected')!;
    expect(data.error.code).toBe('invalid_task_event');
    expect(data.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/data/goal', '/data/priority']));

    // Not even JSON: reported on the catch-all rejected subject.
    const sub = natsHandles(stack.bus).nc.subscribe(stack.bus.subjects.taskRejected(DEFAULT_TEAM), { max: 1 });
    await natsHandles(stack.bus).js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), new TextEncoder().encode('{not json'));
    for await (const m of sub) {
      expect((m.json() as { data: { issues: { message: string }[] } }).data.issues[0]!.message).toMatch(/not valid JSON/);
    }

    // Binary-mode CloudEvent right after: still served.
    const h = natsHeaders();
    h.set('ce-specversion', '1.0');
    h.set('ce-type', 'io.hermes.task.submit');
    h.set('ce-source', '/e2e/binary');
    h.set('ce-id', 'bin-1');
    h.set('content-type', 'application/json');
    await natsHandles(stack.bus).js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson({ user_id: 'dave', goal: 'binary mode works' }), {
      headers: h,
    });
    const events = await collectTaskEvents(stack.bus, taskIdFor(DEFAULT_TEAM, '/e2e/binary', 'bin-1'));
    expect(outputOf(events)).toBe('Scripted answer: binary mode works');
  });

  it('a runtime killed with SIGKILL mid-job: the job is redelivered to the other replica and the task completes', async () => {
    const goal = 'survive a runtime crash';
    let seen = 0;
    stack.llm.setResponder(({ body }) => {
      const text = lastUserMessageText(body);
      if (text === goal && seen++ === 0) return { content: 'too late', delayMs: 10_000 };
      return { content: `Scripted answer: ${text}` };
    });
    const { taskId } = await submitTask(stack.bus, { user_id: 'erin', goal }, { team: DEFAULT_TEAM, source: '/e2e/crash', id: 'crash-1' });

    // Kill the replica only once its LLM call is in flight, i.e. truly mid-job.
    await eventually(() => stack.llm.requests.some((r) => lastUserMessageText(r.body) === goal), 15_000, 'the goal to reach the model');
    const runtimes = await replicasOf(stack, 'runtime');
    const holder = await runtimeHolding(stack, taskId);
    expect(holder, 'a runtime logged that it started the job').toBeDefined();
    await holder!.kill();
    const survivor = runtimes.find((r) => r !== holder)!;
    expect(seen).toBe(1);

    const events = await collectTaskEvents(stack.bus, taskId, 30_000);
    expect(kinds(events).at(-1)).toBe('completed');
    expect(outputOf(events)).toBe(`Scripted answer: ${goal}`);
    const attempts = events.flatMap((e) => taskEventData(e, 'started')?.attempt ?? []);
    expect(attempts).toEqual([1, 2]);
    await survivor.waitForLog(new RegExp(`job succeeded.*${taskId}|${taskId}.*job succeeded`), 1000);
    const view = await request(stack.bus, contracts.taskGet, { task_id: taskId });
    expect(view.attempts).toBe(2);

    // Bring the pool back to two replicas for anything that runs after.
    await stack.startReplica('runtime', 'runtime-3');
  });
});
