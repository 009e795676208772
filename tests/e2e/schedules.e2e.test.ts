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

  it('fires exactly one task per tick with two dispatchers running, goes on when one is killed and when a fresh one replaces the other, and stops when paused', async () => {
    const goal = `scheduled tick ${Date.now()}`;
    const made = await http('POST', '/v1/schedules', { schedule_id: 'every-2s', cron: EVERY_2S, missed: 'skip', task: { goal } });
    expect(made.status).toBe(201);
    // A request in flight to a replica as it is SIGKILLed is answered 503 by the gateway (retryable):
    // a firings count is read again until a dispatcher answers.
    let seen: unknown;
    const firingsNow = () =>
      eventually(
        async () => {
          const read = await http('GET', '/v1/schedules/every-2s');
          seen = read.body;
          return read.status === 200 && (read.body.firings as number);
        },
        10_000,
        () => `a dispatcher to answer; last ${JSON.stringify(seen)}`,
      );
    const firingsReach = (n: number, what: string) =>
      eventually(
        async () => (await firingsNow()) >= n,
        20_000,
        () => `${what} (${n}); last ${JSON.stringify(seen)}`,
      );
    await firingsReach(3, 'three firings');
    // One dispatcher dies mid-run; the other goes on alone.
    const [first, second] = await replicasOf(stack, 'dispatcher');
    await first!.kill();
    await firingsReach((await firingsNow()) + 2, 'two more firings after the kill');
    // A fresh replica joins (two fire again), then the last original dies: the fresh one fires alone.
    await stack.startReplica('dispatcher', 'dispatcher-fresh');
    await firingsReach((await firingsNow()) + 2, 'two firings with the fresh replica beside the other');
    await second!.kill();
    expect((await replicasOf(stack, 'dispatcher')).length).toBe(1);
    await firingsReach((await firingsNow()) + 3, 'three firings by the fresh replica alone');
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
  }, 120_000);

  it('after a 10 s outage of every dispatcher (SIGKILLed, then a fresh one): skip drops the missed firings, run_once fires the latest, catch_up fires each', async () => {
    const policies = ['skip', 'run_once', 'catch_up'] as const;
    type Policy = (typeof policies)[number];
    const goals = Object.fromEntries(policies.map((p) => [p, `missed ${p} ${Date.now()}`])) as Record<Policy, string>;
    // Fire times at chosen seconds (each minute; the test is over long before they come round):
    // one before the outage, three inside it, and one well after the fresh dispatcher is up, so
    // that its first tick finds only missed firings and no on-time one.
    const base = Math.ceil(Date.now() / 1000) * 1000;
    const fireTimes = [3, 6, 8, 10, 30].map((s) => base + s * 1000);
    const cron = `${fireTimes.map((t) => new Date(t).getUTCSeconds()).join(',')} * * * * *`;
    for (const p of policies)
      expect((await http('POST', '/v1/schedules', { schedule_id: `missed-${p}`, cron, missed: p, task: { goal: goals[p] } })).status).toBe(201);
    await eventually(
      async () => (await Promise.all(policies.map((p) => scheduleOf(`missed-${p}`)))).every((s) => s.firings >= 1),
      20_000,
      'the firing before the outage of each',
    );

    const dispatchers = await replicasOf(stack, 'dispatcher');
    for (const d of dispatchers) await d.kill();
    // Read from the bucket: no dispatcher is left to answer.
    const through = Object.fromEntries(
      await Promise.all(policies.map(async (p) => [p, Date.parse((await storedSchedule(`missed-${p}`)).fired_through)] as const)),
    ) as Record<Policy, number>;
    await new Promise((r) => setTimeout(r, 10_000));
    const restartedAt = Date.now();
    await stack.startReplica('dispatcher', 'dispatcher-after-outage');
    const last = fireTimes.at(-1)!;
    // Generous: the fire time after the outage is up to ~20 s away, and the replica starts on a loaded machine.
    await eventually(
      async () => (await Promise.all(policies.map((p) => scheduleOf(`missed-${p}`)))).every((s) => Date.parse(s.fired_through) >= last),
      40_000,
      'every schedule fired the time after the outage',
    );

    // Before the kill, fired; after it and certainly past the grace when the fresh one came, missed.
    const firedBefore = (p: Policy) => fireTimes.filter((t) => t <= through[p]);
    const missed = (p: Policy) => fireTimes.filter((t) => t > through[p] && t < restartedAt - GRACE_MS);
    const expected: Record<Policy, number[]> = {
      skip: [...firedBefore('skip'), last],
      run_once: [...firedBefore('run_once'), missed('run_once').at(-1)!, last],
      catch_up: [...firedBefore('catch_up'), ...missed('catch_up'), last],
    };
    for (const p of policies) {
      expect(firedBefore(p).length).toBeGreaterThanOrEqual(1);
      expect(missed(p).length).toBeGreaterThanOrEqual(2);
      const fired = [];
      for (const t of fireTimes) if (await taskExists(firingTask(`missed-${p}`, t))) fired.push(t);
      expect({ policy: p, fired: fired.map((t) => new Date(t).toISOString()) }).toEqual({
        policy: p,
        fired: expected[p].map((t) => new Date(t).toISOString()),
      });
      // No other task of the schedule, each linked to its firing, and the schedule says what it started.
      const { tasks } = await request(stack.bus, contracts.taskList, { user_id: 'alice', limit: 200 });
      const mine = await Promise.all(tasks.filter((t) => t.goal === goals[p]).map((t) => request(stack.bus, contracts.taskGet, { task_id: t.task_id })));
      expect(mine.map((t) => t.source_event).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        expected[p].map((t) => ({ source: 'hermes/schedules', id: `missed-${p}@${new Date(t).toISOString()}` })),
      );
      expect(await scheduleOf(`missed-${p}`)).toMatchObject({ firings: expected[p].length, last_task_id: firingTask(`missed-${p}`, last) });
    }
    for (const p of policies) await http('DELETE', `/v1/schedules/missed-${p}`);
  }, 120_000);

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
