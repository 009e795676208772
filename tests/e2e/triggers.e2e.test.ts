import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, contracts, taskIdFor, type Trigger } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { natsHandles } from '@hermes/bus/internal';
import { eventually } from '@hermes/testkit';
import { API_KEY, replicasOf, startStack, type Stack } from './stack.js';
import { hermesBin } from './cli-bin.js';

// One stack, two dispatchers; a user of a second team (team-b) to check that triggers stay in their team.
const TEAM_B = 'team-b';
const TEAM_B_KEY = 'test-key-teamb-carol-0123456789';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ apiKeys: [{ key: TEAM_B_KEY, user_id: 'carol', team: TEAM_B, roles: ['user'] }] });
  await stack.startReplica('dispatcher', 'dispatcher-2');
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

async function http(method: string, path: string, body?: unknown, key = API_KEY): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Publishes an event of a team as a team's publisher does; answers its stream sequence. */
async function publishEvent(team: string, subject: string, payload: Record<string, unknown>): Promise<number> {
  const ack = await stack.bus.publish(contracts.teamEvents, payload, { subject: stack.bus.subjects.teamEvent(team, subject) });
  return ack!.seq;
}

/** Every event published so far was handled (acked, so gone from the work queue). */
// Waits for every event to be acked, up to 75 s: generous because a delivery can be stranded until
// the durable's 30 s ack wait (one fresh-clone run waited 30 s here, likely a pull whose client side
// expired as the server delivered; the redelivery is handled once) and the machine is loaded.
const EVENTS_HANDLED_MS = 75_000;
const eventsHandled = async () => (await natsHandles(stack.bus).jsm.streams.info(stack.bus.subjects.streams.teamEvents)).state.messages === 0;

async function goals(user_id: string): Promise<string[]> {
  const { tasks } = await request(stack.bus, contracts.taskList, { user_id, limit: 200 });
  return tasks.map((t) => t.goal);
}
/** The goals of the tasks team-b's user sees (her team's, through the gateway). */
const teamBGoals = async () => ((await http('GET', '/v1/tasks?limit=200', undefined, TEAM_B_KEY)).body.tasks as { goal: string }[]).map((t) => t.goal);

const triggerOf = async (id: string, key = API_KEY) => (await http('GET', `/v1/triggers/${id}`, undefined, key)).body as unknown as Trigger;

describe('triggers', () => {
  it('refuses hostile subjects, conditions and templates with structured errors, and keeps ids per owner', async () => {
    const refused = async (spec: unknown, code: string) => {
      const res = await http('POST', '/v1/triggers', spec);
      expect(res, JSON.stringify(spec)).toMatchObject({ status: 400, body: { code, retryable: false } });
      return res.body;
    };
    // Another team's events, and the prefix's other subjects: not this team's.
    const foreign = await refused({ subject: `hermes.events.${TEAM_B}.orders.>`, task: { goal: 'x' } }, 'invalid_trigger');
    expect(JSON.stringify(foreign)).toContain('own team');
    await refused({ subject: 'hermes.tasks.submit.default', task: { goal: 'x' } }, 'invalid_trigger');
    // Not a subject filter at all (empty token, `>` before the end, spaces).
    for (const subject of ['orders..x', 'orders.>.x', 'orders x', ''] as const) await refused({ subject, task: { goal: 'x' } }, 'invalid_payload');
    // A condition nested past the bound, an unknown operator (no eval), a list operator without a list.
    let deep: unknown = { field: '/a', op: 'exists' };
    for (let i = 0; i < 10; i++) deep = { not: deep };
    await refused({ subject: 'orders.*', condition: deep, task: { goal: 'x' } }, 'invalid_trigger');
    await refused({ subject: 'orders.*', condition: { field: '/a', op: 'eval', value: 'process.exit()' }, task: { goal: 'x' } }, 'invalid_trigger');
    await refused({ subject: 'orders.*', condition: { field: '/a', op: 'in', value: 3 }, task: { goal: 'x' } }, 'invalid_trigger');
    // Placeholders that are not JSON Pointers, an unclosed one, too many.
    const notPointer = await refused({ subject: 'orders.*', task: { goal: 'check {{constructor.prototype}}' } }, 'invalid_trigger');
    expect(JSON.stringify(notPointer)).toContain('/task/goal');
    await refused({ subject: 'orders.*', task: { goal: 'check {{/id' } }, 'invalid_trigger');
    await refused({ subject: 'orders.*', task: { goal: Array.from({ length: 40 }, () => '{{/id}}').join(' ') } }, 'invalid_trigger');
    // The owner comes from the API key, never the body.
    await refused({ subject: 'orders.*', task: { goal: 'x', user_id: 'mallory' } }, 'invalid_payload');

    const spec = { trigger_id: 'big-orders', subject: 'orders.*', task: { goal: 'x' } };
    expect(await http('POST', '/v1/triggers', spec)).toMatchObject({ status: 201, body: { trigger_id: 'big-orders', user_id: 'alice', firings: 0 } });
    expect((await http('POST', '/v1/triggers', spec)).status).toBe(201);
    expect(await http('POST', '/v1/triggers', { ...spec, subject: 'orders.>' })).toMatchObject({ status: 409, body: { code: 'duplicate_conflict' } });
    // team-b's user has her own trigger of that name.
    expect((await http('GET', '/v1/triggers/big-orders', undefined, TEAM_B_KEY)).status).toBe(404);
    expect(await http('DELETE', '/v1/triggers/big-orders')).toMatchObject({ status: 200, body: { deleted: true } });
    expect((await http('GET', '/v1/triggers/big-orders')).status).toBe(404);
  });

  it('starts one task per matching event and none for others, with two dispatchers; another team’s events do not reach it', async () => {
    const tag = `run${Date.now()}`;
    const made = await http('POST', '/v1/triggers', {
      trigger_id: 'orders',
      subject: 'orders.*',
      condition: {
        all: [
          { field: '/total', op: 'gt', value: 100 },
          { field: '/tag', op: 'eq', value: tag },
        ],
      },
      task: { goal: `check order {{/id}} of {{/customer/name}} (${tag})` },
    });
    expect(made.status).toBe(201);
    // team-b has a trigger on the same relative subject, in its own events.
    expect(
      (await http('POST', '/v1/triggers', { trigger_id: 'orders', subject: 'orders.*', task: { goal: `team-b order {{/id}} (${tag})` } }, TEAM_B_KEY)).status,
    ).toBe(201);

    const order = (id: string, total: number) => ({ id, total, tag, customer: { name: 'Ada' } });
    const matching: Record<string, number> = {};
    for (const id of ['o1', 'o2', 'o3']) matching[id] = await publishEvent(DEFAULT_TEAM, `orders.${id}`, order(id, 250));
    await publishEvent(DEFAULT_TEAM, 'orders.o4', order('o4', 50)); // fails the condition
    await publishEvent(DEFAULT_TEAM, 'orders.eu.o5', order('o5', 500)); // `*` is one token
    await publishEvent(DEFAULT_TEAM, 'refunds.o6', order('o6', 500)); // another subject
    await publishEvent(DEFAULT_TEAM, 'orders.o7', { total: 500, tag }); // the goal's /id is missing: no task
    await publishEvent(DEFAULT_TEAM, 'orders.o8', { id: 'o8', total: '250', tag }); // a string is not greater than 100
    const teamBSeq = await publishEvent(TEAM_B, 'orders.b1', order('b1', 900));

    // Two dispatchers pull from the one durable; every event is handled before counting.
    await eventually(eventsHandled, EVENTS_HANDLED_MS, 'every event handled');
    const expected = ['o1', 'o2', 'o3'].map((id) => `check order ${id} of Ada (${tag})`).sort();
    await eventually(async () => (await goals('alice')).filter((g) => g.endsWith(`(${tag})`)).length >= 3, 20_000, 'three tasks');
    expect((await goals('alice')).filter((g) => g.endsWith(`(${tag})`)).sort()).toEqual(expected);
    const trigger = await triggerOf('orders');
    expect(trigger.firings).toBe(3);
    // Each task is named by the trigger and the event's stream sequence, so a redelivery is the same task.
    expect(trigger.last_task_id).toBe(taskIdFor(DEFAULT_TEAM, 'hermes/triggers', `orders@${trigger.last_event_seq}`));
    for (const seq of Object.values(matching)) {
      const task = await request(stack.bus, contracts.taskGet, { task_id: taskIdFor(DEFAULT_TEAM, 'hermes/triggers', `orders@${seq}`) });
      expect(task.goal).toMatch(/^check order o\d of Ada/);
    }
    // team-b's event started team-b's task only.
    await eventually(async () => (await teamBGoals()).length === 1, 20_000, "team-b's task");
    expect(await teamBGoals()).toEqual([`team-b order b1 (${tag})`]);
    expect((await triggerOf('orders', TEAM_B_KEY)).last_task_id).toBe(taskIdFor(TEAM_B, 'hermes/triggers', `orders@${teamBSeq}`));

    // Paused: a matching event starts nothing.
    expect(await http('POST', '/v1/triggers/orders/pause')).toMatchObject({ status: 200, body: { paused: true } });
    await publishEvent(DEFAULT_TEAM, 'orders.o9', order('o9', 250));
    await eventually(eventsHandled, EVENTS_HANDLED_MS, 'the paused event handled');
    expect((await triggerOf('orders')).firings).toBe(3);
    expect(await http('POST', '/v1/triggers/orders/resume')).toMatchObject({ status: 200, body: { paused: false } });
  }, 180_000);

  it('events published while every dispatcher is down start their tasks once after a restart', async () => {
    const tag = `outage${Date.now()}`;
    expect((await http('POST', '/v1/triggers', { trigger_id: 'outage', subject: 'alerts.>', task: { goal: `alert {{/name}} (${tag})` } })).status).toBe(201);
    for (const d of await replicasOf(stack, 'dispatcher')) await d.kill();
    // Nobody pulls now: the events wait in the stream.
    for (const name of ['a', 'b', 'c']) await publishEvent(DEFAULT_TEAM, `alerts.cpu.${name}`, { name });
    expect(await eventsHandled()).toBe(false);
    await stack.startReplica('dispatcher', 'dispatcher-3');
    await eventually(eventsHandled, EVENTS_HANDLED_MS, 'the waiting events handled');
    await eventually(async () => (await goals('alice')).filter((g) => g.endsWith(`(${tag})`)).length >= 3, 20_000, 'three tasks after the restart');
    expect((await goals('alice')).filter((g) => g.endsWith(`(${tag})`)).sort()).toEqual(['a', 'b', 'c'].map((n) => `alert ${n} (${tag})`));
    expect((await triggerOf('outage')).firings).toBe(3);
  }, 180_000);
  it('hermes trigger create, list, show, pause, resume and delete: a matching event starts one task, none while paused', async () => {
    const tag = `cli${Date.now()}`;
    const hermes = hermesBin(stack.natsUrl, { HERMES_USER: 'dave' });
    expect(await hermes('trigger', 'create', '--goal', 'x')).toMatchObject({ code: 2, err: expect.stringContaining('--subject and --goal are required') });
    expect(await hermes('trigger', 'create', '--subject', 'a.*', '--goal', 'x', '--condition', '{nope')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--condition is not JSON'),
    });
    // The dispatcher's own checks reach the terminal as their code: another team's events are refused.
    expect(await hermes('trigger', 'create', '--subject', `hermes.events.${TEAM_B}.x`, '--goal', 'x')).toMatchObject({
      code: 1,
      err: expect.stringContaining('invalid_trigger'),
    });
    const condition = JSON.stringify({ field: '/tag', op: 'eq', value: tag });
    const made = await hermes(
      'trigger',
      'create',
      '--id',
      'cli-orders',
      '--subject',
      'cliorders.*',
      '--condition',
      condition,
      '--goal',
      `cli order {{/id}} (${tag})`,
    );
    expect(made, made.err).toMatchObject({ code: 0 });
    expect(made.out).toMatch(/^TRIGGER\s+SUBJECT\s+CONDITION\s+STATE/);
    expect(made.out).toMatch(/\ncli-orders\s+cliorders\.\*\s+yes\s+active\s+0\s+-\s+-/);
    expect((await hermes('trigger', 'list')).out).toMatch(/\ncli-orders\s+/);

    const daveGoals = async () => (await goals('dave')).filter((g) => g.endsWith(`(${tag})`));
    const seq = await publishEvent(DEFAULT_TEAM, 'cliorders.c1', { id: 'c1', tag });
    await publishEvent(DEFAULT_TEAM, 'cliorders.c2', { id: 'c2', tag: 'other' }); // fails the condition
    await eventually(eventsHandled, EVENTS_HANDLED_MS, 'the events handled');
    await eventually(async () => (await daveGoals()).length >= 1, 20_000, "dave's task");
    expect(await daveGoals()).toEqual([`cli order c1 (${tag})`]);
    const shown = JSON.parse((await hermes('trigger', 'show', 'cli-orders', '--json')).out) as Trigger;
    expect(shown).toMatchObject({ trigger_id: 'cli-orders', user_id: 'dave', firings: 1, paused: false });
    expect(shown.last_task_id).toBe(taskIdFor(DEFAULT_TEAM, 'hermes/triggers', `cli-orders@${seq}`));

    expect((await hermes('trigger', 'pause', 'cli-orders')).out).toMatch(/\ncli-orders\s+.*\spaused\s+1\s/);
    await publishEvent(DEFAULT_TEAM, 'cliorders.c3', { id: 'c3', tag });
    await eventually(eventsHandled, EVENTS_HANDLED_MS, 'the paused event handled');
    expect(await daveGoals()).toEqual([`cli order c1 (${tag})`]);
    expect((JSON.parse((await hermes('trigger', 'show', 'cli-orders', '--json')).out) as Trigger).firings).toBe(1);

    expect((await hermes('trigger', 'resume', 'cli-orders')).out).toMatch(/\ncli-orders\s+.*\sactive\s+1\s/);
    // Another user's id is not dave's trigger.
    expect(await hermes('trigger', 'show', 'cli-orders', '--user', 'erin')).toMatchObject({
      code: 1,
      err: expect.stringContaining('no trigger cli-orders of erin'),
    });
    expect(await hermes('trigger', 'delete', 'cli-orders')).toMatchObject({ code: 0, out: 'deleted cli-orders\n' });
    expect((await hermes('trigger', 'show', 'cli-orders')).code).toBe(1);
    expect(await hermes('trigger', 'delete', 'cli-orders')).toMatchObject({ code: 1 });
  }, 180_000);
});
