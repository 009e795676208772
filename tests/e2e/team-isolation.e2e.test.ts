import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { encodeJson } from '@hermes/bus';
import { TASK_SUBMIT_TYPE, subjectsFor, taskEventKind, taskIdFor, type TaskEvent, type TaskView } from '@hermes/contracts';
import { HERMES_SERVICES, inboxPrefixFor, type NatsUser } from '@hermes/contracts/nats-permissions';
import { startHermesStack, type HermesStack } from '@hermes/devstack';
import { startAccountsServer, TEAMS, type AccountsServer } from './team-accounts.js';
import { eventually } from '@hermes/testkit';

const s = subjectsFor();
const [A, B] = TEAMS as [string, string];
let server: AccountsServer;
let stack: HermesStack;
const connections: NatsConnection[] = [];

const credentialsOf = (user: NatsUser) => ({ NATS_USER: user, NATS_PASSWORD: server.passwords[user], NATS_INBOX_PREFIX: inboxPrefixFor(user) });

/** A team's client: a plain NATS connection as the team's user, in the team's account. */
async function connectTeam(team: string): Promise<NatsConnection> {
  const nc = await connect({ servers: server.nats.url, user: team, pass: server.teamPasswords[team]!, name: `team-${team}` });
  connections.push(nc);
  return nc;
}

/** Submits as a team does: a CloudEvent on the plain `hermes.tasks.submit` its account maps to its own subject. */
async function submitAs(nc: NatsConnection, team: string, data: { user_id: string; goal: string }): Promise<string> {
  const id = randomUUID();
  const event = { specversion: '1.0', type: TASK_SUBMIT_TYPE, source: `/teams/${team}`, id, data };
  const taskId = taskIdFor(team, event.source, id);
  const ack = await jetstream(nc).publish(s.taskSubmitLegacy, encodeJson(event), { msgID: taskId, timeout: 10_000 });
  expect(ack.stream).toBe(s.streams.taskSubmit);
  return taskId;
}

/** Answers a team request (on the plain subject the account maps), as the parsed envelope. */
async function ask(nc: NatsConnection, subject: string, body: unknown): Promise<{ ok: boolean; result?: unknown; error?: { code: string; message: string } }> {
  const reply = await nc.request(subject, encodeJson(body), { timeout: 10_000 });
  return reply.json();
}

/** Collects the events of everything a subscription sees until the task's terminal event. */
function watch(nc: NatsConnection, subject: string): { events: TaskEvent[]; ended: (taskId: string) => Promise<TaskEvent[]> } {
  const events: TaskEvent[] = [];
  const sub = nc.subscribe(subject);
  void (async () => {
    for await (const m of sub) events.push(m.json<TaskEvent>());
  })();
  return {
    events,
    ended: async (taskId) => {
      // Generous: a planned task with a tool call through five services on a loaded 2-core machine.
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const mine = events.filter((e) => e.subject === taskId);
        if (mine.some((e) => ['completed', 'failed', 'cancelled'].includes(taskEventKind(e)))) return mine;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`task ${taskId} did not end; saw ${events.map(taskEventKind).join(', ')}`);
    },
  };
}

beforeAll(async () => {
  server = await startAccountsServer();
  stack = await startHermesStack({
    natsUrl: server.nats.url,
    apiKeys: [{ key: 'team-iso-key-0123456789', user_id: 'alice', roles: ['user'] }],
    env: { LLM_MAX_RETRIES: '0', SHUTDOWN_TIMEOUT_MS: '3000', PLAN_MODE: 'single' },
    serviceEnv: Object.fromEntries(HERMES_SERVICES.map((svc) => [svc, credentialsOf(svc)])),
    // Four services start at once; on a loaded 2-core machine that can take longer than the default.
    readyTimeoutMs: 60_000,
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(connections.map((c) => c.drain().catch(() => {})));
  await stack?.stop();
  await server?.nats.stop();
});

describe('teams as NATS accounts (generated deploy/nats/hermes-accounts.conf on a real nats-server)', () => {
  let taskOfA: string;

  it("a team submits on its plain subject, reads its own task's events and state, and another team sees none of it", async () => {
    const [a, b] = [await connectTeam(A), await connectTeam(B)];
    const own = watch(a, s.teamTaskEvents(A));
    // Team B listens as widely as its account lets it: every subject.
    const snoop = watch(b, '>');
    await Promise.all([a.flush(), b.flush()]);
    taskOfA = await submitAs(a, A, { user_id: 'alice', goal: 'team a secret plan' });

    const events = await own.ended(taskOfA);
    expect(events.map(taskEventKind)).toEqual(expect.arrayContaining(['accepted', 'started', 'completed']));
    const got = await ask(a, s.taskGet, { task_id: taskOfA });
    expect(got.ok).toBe(true);
    expect(got.result as TaskView).toMatchObject({ task_id: taskOfA, team: A, user_id: 'alice', status: 'completed' });
    expect(snoop.events.filter((e) => JSON.stringify(e).includes(taskOfA))).toEqual([]);
  });

  it("another team's get, cancel and list answer not_found / nothing for it, from the dispatcher itself", async () => {
    const b = await connectTeam(B);
    const get = await ask(b, s.taskGet, { task_id: taskOfA });
    expect(get).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const cancel = await ask(b, s.taskCancel, { task_id: taskOfA, reason: 'sabotage' });
    expect(cancel).toMatchObject({ ok: false, error: { code: 'not_found' } });
    for (const user_id of ['alice', null]) {
      const list = await ask(b, s.taskList, { user_id });
      expect(list.ok).toBe(true);
      expect((list.result as { tasks: { task_id: string }[] }).tasks.map((t) => t.task_id)).not.toContain(taskOfA);
    }
    // Naming team A's own subjects from team B's account reaches nothing: nobody in B's account answers.
    await expect(b.request(s.teamTaskGet(A), encodeJson({ task_id: taskOfA }), { timeout: 2_000 })).rejects.toThrow(/no responders|timeout/i);
    await expect(jetstream(b).publish(s.taskSubmit(A), encodeJson({ forged: true }), { timeout: 2_000 })).rejects.toThrow(/no responders|timeout/i);
  });

  it('the same user id in two teams is two users: team B cannot reach alice of team A by naming her', async () => {
    const b = await connectTeam(B);
    const own = watch(b, s.teamTaskEvents(B));
    await b.flush();
    const taskOfB = await submitAs(b, B, { user_id: 'alice', goal: 'team b alice' });
    await own.ended(taskOfB);
    const listed = await ask(b, s.taskList, { user_id: 'alice' });
    const ids = (listed.result as { tasks: { task_id: string; team?: string }[] }).tasks;
    expect(ids.map((t) => t.task_id)).toEqual([taskOfB]);
    expect(ids[0]!.team).toBe(B);
  });

  it('a team account has no JetStream: no stream info, no consumer, no push consumer delivering into a Hermes subject', async () => {
    const b = await connectTeam(B);
    const tries = [
      ['$JS.API.INFO', {}],
      [`$JS.API.STREAM.INFO.${s.streams.taskEvents}`, {}],
      [
        `$JS.API.CONSUMER.CREATE.${s.streams.taskEvents}`,
        { stream_name: s.streams.taskEvents, config: { filter_subject: s.taskEventsAll, ack_policy: 'none' } },
      ],
      [
        `$JS.API.CONSUMER.CREATE.${s.streams.taskEvents}`,
        {
          stream_name: s.streams.taskEvents,
          config: { deliver_subject: s.toolCall, deliver_group: s.queueGroup('toolbus'), ack_policy: 'none', deliver_policy: 'all' },
        },
      ],
      [`$JS.API.DIRECT.GET.KV_${s.buckets.tasks}`, { last_by_subj: `$KV.${s.buckets.tasks}.${taskOfA}` }],
    ] as const;
    const answers: string[] = [];
    for (const [subject, body] of tries) {
      const answer = await b.request(subject, encodeJson(body), { timeout: 3_000 }).then(
        (m) => m.json<{ error?: { code: number; description: string } }>(),
        (err: Error) => ({ refused: err.message }),
      );
      // The server answers the JetStream API itself ("jetstream not enabled for account"); what it does not know is answered by nobody.
      expect(JSON.stringify(answer), subject).toMatch(/jetstream not enabled|no responders|timeout/i);
      answers.push(JSON.stringify(answer));
    }
    // Every JetStream API call, the push consumer in particular, is refused by the server as JetStream-less, not merely unanswered.
    for (const answer of answers.slice(0, 4)) expect(answer).toMatch(/jetstream not enabled/i);
  });

  it("a team publishes trigger events on events.> in its own account: they start its trigger's task; the prefix's events subjects (team B's) are refused", async () => {
    const tag = `ev${Date.now()}`;
    // The trigger is made inside HERMES, as the gateway or CLI would for a user of team A.
    const cli = await connect({ servers: server.nats.url, user: 'cli', pass: server.passwords.cli, inboxPrefix: inboxPrefixFor('cli') });
    connections.push(cli);
    for (const team of [A, B]) {
      const made = await ask(cli, s.triggerCreate, {
        team,
        user_id: 'alice',
        spec: { trigger_id: 'orders', subject: 'orders.*', task: { goal: `${team} order {{/id}} (${tag})` } },
      });
      expect(made, JSON.stringify(made)).toMatchObject({ ok: true });
    }
    const goalsOf = async (nc: NatsConnection) =>
      ((await ask(nc, s.taskList, { user_id: 'alice', limit: 200 })).result as { tasks: { goal: string }[] }).tasks
        .map((t) => t.goal)
        .filter((g) => g.endsWith(`(${tag})`));
    const [a, b] = [await connectTeam(A), await connectTeam(B)];

    // Core publish: the team's account has no JetStream, so no ack comes back to it; the mapping puts it in the HERMES stream.
    a.publish('events.orders.a1', encodeJson({ id: 'a1' }));
    await a.flush();
    // Generous: the dispatcher pulls the event and starts the task through a loaded 2-core machine.
    await eventually(async () => (await goalsOf(a)).length >= 1, 60_000, "team A's trigger task");
    expect(await goalsOf(a)).toEqual([`${A} order a1 (${tag})`]);

    // Team B's events subject, named in full from team A's account: a permissions violation, and nothing starts.
    const from = server.nats.logs.length;
    await expect(jetstream(a).publish(s.teamEvent(B, 'orders.forged'), encodeJson({ id: 'forged' }), { timeout: 2_000 })).rejects.toThrow(
      /permissions violation for publish/i,
    );
    await eventually(() => server.nats.logs.slice(from).some((l) => /Publish Violation.*User "team-a"/.test(l)), 5_000, 'the violation logged');
    // Team B's own event, published after the forged one, is the only one its trigger sees.
    b.publish('events.orders.b1', encodeJson({ id: 'b1' }));
    await b.flush();
    await eventually(async () => (await goalsOf(b)).length >= 1, 60_000, "team B's trigger task");
    expect(await goalsOf(b)).toEqual([`${B} order b1 (${tag})`]);
    expect(await goalsOf(a)).toEqual([`${A} order a1 (${tag})`]);
  }, 150_000);
});
