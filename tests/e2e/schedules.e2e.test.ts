import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, contracts, taskIdFor, type Schedule, type ScheduleView } from '@hermes/contracts';
import { request, RemoteError } from '@hermes/bus';
import { eventually } from '@hermes/testkit';
import { API_KEY, ADMIN_KEY, replicasOf, startStack, type Stack } from './stack.js';
import { hermesBin } from './cli-bin.js';

// Two dispatchers, each looking for due firings every 200 ms; a firing more than 1 s late was missed.
const GRACE_MS = 1000;
const EVERY_2S = '*/2 * * * * *';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ serviceEnv: { dispatcher: { SCHEDULE_TICK_MS: '200', SCHEDULE_GRACE_MS: String(GRACE_MS) } } });
  await stack.startReplica('dispatcher', 'dispatcher-2');
}, 120_000);

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
const scheduleOf = async (id: string) => (await http('GET', `/v1/schedules/${id}`)).body as unknown as ScheduleView;

/** The task a firing of alice's schedule starts: named by the schedule and the fire time. */
const firingTask = (scheduleId: string, at: number) => taskIdFor(DEFAULT_TEAM, 'hermes/schedules', `${scheduleId}@${new Date(at).toISOString()}`);
async function taskExists(taskId: string): Promise<boolean> {
  try {
    await request(stack.bus, contracts.taskGet, { task_id: taskId });
    return true;
  } catch (err) {
    if (err instanceof RemoteError && err.wire.code === 'not_found') return false;
    throw err;
  }
}
/** The fire times of an every-2-seconds schedule in (from, to]. */
function ticks(from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = Math.floor(from / 2000) * 2000 + 2000; t <= to; t += 2000) out.push(t);
  return out;
}
/** alice's schedule as stored, read from the bucket without asking a dispatcher. */
async function storedSchedule(id: string): Promise<Schedule> {
  const kv = await stack.bus.kv('schedules');
  for await (const key of await kv.keys()) {
    const s = (await kv.get(key))?.json<Schedule>();
    if (s?.schedule_id === id && s.user_id === 'alice') return s;
  }
  throw new Error(`no stored schedule ${id}`);
}
async function goalCount(goal: string): Promise<number> {
  const { tasks } = await request(stack.bus, contracts.taskList, { user_id: 'alice', limit: 200 });
  return tasks.filter((t) => t.goal === goal).length;
}

describe('schedules', () => {
  it('refuses an unreadable cron expression and an unknown time zone as the caller’s 400; a schedule id is its owner’s own', async () => {
    expect(await http('POST', '/v1/schedules', { cron: 'every morning', task: { goal: 'x' } })).toMatchObject({
      status: 400,
      body: { code: 'invalid_schedule' },
    });
    expect(await http('POST', '/v1/schedules', { cron: '0 7 * * *', timezone: 'Mars/Olympus', task: { goal: 'x' } })).toMatchObject({
      status: 400,
      body: { code: 'invalid_schedule' },
    });
    expect(await http('POST', '/v1/schedules', { cron: '0 7 * * *', task: { goal: 'x', user_id: 'mallory' } })).toMatchObject({
      status: 400,
      body: { code: 'invalid_payload' },
    });
    const made = await http('POST', '/v1/schedules', {
      schedule_id: 'daily-report',
      cron: '0 7 * * *',
      timezone: 'Europe/Berlin',
      task: { goal: 'summarise yesterday' },
    });
    expect(made).toMatchObject({ status: 201, body: { schedule_id: 'daily-report', user_id: 'alice', missed: 'run_once', paused: false, firings: 0 } });
    expect(Date.parse(made.body.next_fire_at as string)).toBeGreaterThan(Date.now());
    // The same id and spec again is the same schedule; another spec under the id is a conflict.
    expect(
      (
        await http('POST', '/v1/schedules', {
          schedule_id: 'daily-report',
          cron: '0 7 * * *',
          timezone: 'Europe/Berlin',
          task: { goal: 'summarise yesterday' },
        })
      ).status,
    ).toBe(201);
    expect(await http('POST', '/v1/schedules', { schedule_id: 'daily-report', cron: '0 8 * * *', task: { goal: 'summarise yesterday' } })).toMatchObject({
      status: 409,
      body: { code: 'duplicate_conflict' },
    });
    // The admin (user "ops") sees it in the team's list and, naming alice, reads it.
    const all = (await http('GET', '/v1/schedules', undefined, ADMIN_KEY)).body.schedules as ScheduleView[];
    expect(all.map((s) => `${s.user_id}/${s.schedule_id}`)).toContain('alice/daily-report');
    expect((await http('GET', '/v1/schedules/daily-report?user=alice', undefined, ADMIN_KEY)).status).toBe(200);
    expect((await http('GET', '/v1/schedules/daily-report', undefined, ADMIN_KEY)).status).toBe(404);
    expect(await http('DELETE', '/v1/schedules/daily-report')).toMatchObject({ status: 200, body: { deleted: true } });
    expect((await http('GET', '/v1/schedules/daily-report')).status).toBe(404);
  });

  it('fires exactly one task per tick with two dispatchers running, goes on when one is killed, and stops when paused', async () => {
    const goal = `scheduled tick ${Date.now()}`;
    const made = await http('POST', '/v1/schedules', { schedule_id: 'every-2s', cron: EVERY_2S, missed: 'skip', task: { goal } });
    expect(made.status).toBe(201);
    await eventually(async () => (await scheduleOf('every-2s')).firings >= 3, 20_000, 'three firings');
    // One dispatcher dies mid-run; the other goes on alone.
    const [first] = await replicasOf(stack, 'dispatcher');
    await first!.kill();
    const before = (await scheduleOf('every-2s')).firings;
    await eventually(async () => (await scheduleOf('every-2s')).firings >= before + 3, 20_000, 'three more firings after the kill');
    const paused = await http('POST', '/v1/schedules/every-2s/pause');
    expect(paused).toMatchObject({ status: 200, body: { paused: true } });
    expect(paused.body.next_fire_at).toBeUndefined();
    const view = paused.body as unknown as ScheduleView;

    // Every tick from creation to the last firing has its task, and there is no other.
    const fired = ticks(Date.parse(made.body.created_at as string), Date.parse(view.fired_through));
    const missing = [];
    for (const t of fired) if (!(await taskExists(firingTask('every-2s', t)))) missing.push(new Date(t).toISOString());
    expect(missing).toEqual([]);
    expect(view.firings).toBe(fired.length);
    await eventually(async () => (await goalCount(goal)) === fired.length, 10_000, `${fired.length} tasks of the schedule`);
    expect(view.last_task_id).toBe(firingTask('every-2s', fired.at(-1)!));

    // Paused: nothing fires for a few ticks.
    await new Promise((r) => setTimeout(r, 4500));
    expect((await scheduleOf('every-2s')).firings).toBe(view.firings);
    expect(await goalCount(goal)).toBe(fired.length);
    await http('DELETE', '/v1/schedules/every-2s');
  }, 90_000);

  it('after every dispatcher was frozen for 7 s: skip drops the missed firings, run_once fires one for them, catch_up fires each', async () => {
    const goal = (p: string) => `missed ${p} ${Date.now()}`;
    const policies = ['skip', 'run_once', 'catch_up'] as const;
    const goals = Object.fromEntries(policies.map((p) => [p, goal(p)]));
    for (const p of policies)
      expect((await http('POST', '/v1/schedules', { schedule_id: `missed-${p}`, cron: EVERY_2S, missed: p, task: { goal: goals[p] } })).status).toBe(201);
    await eventually(
      async () => (await Promise.all(policies.map((p) => scheduleOf(`missed-${p}`)))).every((s) => s.firings >= 1),
      20_000,
      'a first firing of each',
    );

    const dispatchers = await replicasOf(stack, 'dispatcher');
    await Promise.all(dispatchers.map((d) => d.pause()));
    // Read from the bucket: the frozen dispatchers answer no request.
    const through = Object.fromEntries(
      await Promise.all(policies.map(async (p) => [p, Date.parse((await storedSchedule(`missed-${p}`)).fired_through)] as const)),
    );
    await new Promise((r) => setTimeout(r, 7000));
    const resumedAt = Date.now();
    for (const d of dispatchers) d.resume();
    await eventually(
      async () => (await Promise.all(policies.map((p) => scheduleOf(`missed-${p}`)))).every((s) => Date.parse(s.fired_through) >= resumedAt - 2000),
      20_000,
      'every schedule fired through the outage',
    );

    const window = (p: (typeof policies)[number]) => ticks(through[p]!, resumedAt);
    const firedIn = async (p: (typeof policies)[number]) => {
      const out: number[] = [];
      for (const t of window(p)) if (await taskExists(firingTask(`missed-${p}`, t))) out.push(t);
      return out;
    };
    // Fire times certainly past the grace when the dispatchers came back.
    const missedTicks = (p: (typeof policies)[number]) => window(p).filter((t) => t < resumedAt - GRACE_MS - 500);
    expect(missedTicks('catch_up').length).toBeGreaterThanOrEqual(2);
    expect(await firedIn('catch_up')).toEqual(window('catch_up'));
    expect((await firedIn('run_once')).length).toBe(1);
    const skipFired = await firedIn('skip');
    expect(skipFired.filter((t) => missedTicks('skip').includes(t))).toEqual([]);
    expect(skipFired.length).toBeLessThanOrEqual(1);
    for (const p of policies) await http('DELETE', `/v1/schedules/missed-${p}`);
  }, 90_000);

  it('hermes schedule create, list, show, pause, resume and delete', async () => {
    // The built `hermes` bin, as a person runs it.
    const hermes = hermesBin(stack.natsUrl, { HERMES_USER: 'carol' });
    expect(await hermes('schedule', 'create', '--goal', 'x')).toMatchObject({ code: 2, err: expect.stringContaining('--cron and --goal are required') });
    expect(await hermes('schedule', 'create', '--cron', 'tomorrow', '--goal', 'x')).toMatchObject({
      code: 1,
      err: expect.stringContaining('invalid_schedule'),
    });
    const made = await hermes(
      'schedule',
      'create',
      '--id',
      'weekly',
      '--cron',
      '0 9 * * 1',
      '--tz',
      'America/New_York',
      '--missed',
      'skip',
      '--goal',
      'plan the week',
    );
    expect(made.code).toBe(0);
    expect(made.out).toMatch(/\nweekly\s+0 9 \* \* 1\s+America\/New_York\s+skip\s+active\s+\d{4}-\d\d-\d\dT1[34]:00:00\.000Z\s+0\s+-/);
    expect((await hermes('schedule', 'list')).out).toMatch(/\nweekly\s+/);
    expect((await hermes('schedule', 'pause', 'weekly')).out).toMatch(/\nweekly\s+.*\spaused\s+-\s+0/);
    expect((await hermes('schedule', 'resume', 'weekly')).out).toMatch(/\nweekly\s+.*\sactive\s+\d{4}/);
    expect(JSON.parse((await hermes('schedule', 'show', 'weekly', '--json')).out)).toMatchObject({ schedule_id: 'weekly', user_id: 'carol', paused: false });
    // Another user's id is not carol's schedule.
    expect(await hermes('schedule', 'show', 'weekly', '--user', 'dave')).toMatchObject({ code: 1, err: expect.stringContaining('no schedule weekly of dave') });
    expect(await hermes('schedule', 'delete', 'weekly')).toMatchObject({ code: 0, out: 'deleted weekly\n' });
    expect((await hermes('schedule', 'show', 'weekly')).code).toBe(1);
  }, 60_000);
});
