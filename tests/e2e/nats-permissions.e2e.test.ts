import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { Bus, encodeJson, followTaskEvents, request, submitTask } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, taskEventData, taskEventKind, type TaskEvent } from '@hermes/contracts';
import { HERMES_SERVICES, inboxPrefixFor, NATS_USERS, passwordVariableFor, type NatsUser } from '@hermes/contracts/nats-permissions';
import { startHermesStack, type HermesStack } from '@hermes/devstack';
import { createLogger } from '@hermes/telemetry';
import { eventually, lastUserMessageText, startNatsServer, type NatsServerHandle, type Responder } from '@hermes/testkit';
import { natsHandles } from '@hermes/bus/internal';

// The generated least-privilege users (deploy/nats/hermes-users.conf, as committed) on a real
// nats-server: every service runs as its own user and a task still goes through all of them; each
// user is refused what it has no business doing.
const usersConf = readFileSync(fileURLToPath(new URL('../../deploy/nats/hermes-users.conf', import.meta.url)), 'utf8');
const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, randomBytes(12).toString('hex')])) as Record<NatsUser, string>;
const API_KEY = 'perm-test-key-0123456789';

// The planner gets a one-subtask plan; the agent calls the echo tool once, then answers with what it returned.
const responder: Responder = ({ body }) => {
  const system = body.messages?.find((m) => m.role === 'system');
  const planned = /^Goal to plan: (.*)$/m.exec(typeof system?.content === 'string' ? system.content : '')?.[1];
  if (planned !== undefined) return { content: JSON.stringify({ subtasks: [{ id: 'answer', intent: planned, depends_on: [] }] }) };
  const toolResult = body.messages?.findLast((m) => m.role === 'tool');
  // A goal asking to remember calls remember after echo: the toolbus then reads the task's call records (ResultTrust).
  if (toolResult && /and remember it/.test(lastUserMessageText(body)) && body.messages?.filter((m) => m.role === 'tool').length === 1) {
    return { toolCalls: [{ id: 'call_remember', name: 'remember', arguments: { content: 'The operator proved least privilege.' } }] };
  }
  if (toolResult) return { content: `echo said ${String(toolResult.content)}` };
  return { toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { text: `for ${lastUserMessageText(body).slice(0, 40)}` } }] };
};

const cliEntry = fileURLToPath(new URL('../../tools/cli/dist/main.js', import.meta.url));
let nats: NatsServerHandle;
/** The task the submitter ran, for the CLI to look at. */
let submitted: string;
let stack: HermesStack;
const clients: Bus[] = [];

const credentialsOf = (user: NatsUser) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user], NATS_INBOX_PREFIX: inboxPrefixFor(user) });

async function connectAs(user: NatsUser, opts: { password?: string; inboxPrefix?: string; logLines?: string[] } = {}): Promise<Bus> {
  const lines = opts.logLines;
  const logger = lines
    ? createLogger({ service: 'perm-test', level: 'info', destination: { write: (line: string) => void lines.push(line) } })
    : createLogger({ service: 'perm-test', level: 'silent' });
  const bus = await Bus.connect({
    servers: nats.url,
    name: `perm-test-${user}`,
    logger,
    user,
    password: opts.password ?? passwords[user],
    inboxPrefix: opts.inboxPrefix ?? inboxPrefixFor(user),
    waitOnFirstConnect: false,
  });
  clients.push(bus);
  return bus;
}

/** The permission violations nats-server logged since `from` (an index into its log). */
const violations = (from = 0) => nats.logs.slice(from).filter((l) => /(Publish|Subscription) Violation/.test(l));

/** Waits (briefly) for nats-server to log a violation matching `pattern`: its output arrives after the client's error. */
async function loggedViolation(from: number, pattern: RegExp): Promise<string> {
  return eventually(() => violations(from).find((l) => pattern.test(l)), 3000).catch(() => '');
}
const denied = (op: 'Publish' | 'Subscription', subject: string) =>
  new RegExp(`permissions violation for ${op === 'Publish' ? 'publish' : 'subscription'} to "${subject.replace(/[.$*>]/g, (c) => `\\${c}`)}`, 'i');

async function collect(bus: Bus, taskId: string, timeoutMs = 30_000): Promise<TaskEvent[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const events: TaskEvent[] = [];
  for await (const { event } of followTaskEvents(bus, { team: DEFAULT_TEAM, task_id: taskId }, { signal })) events.push(event);
  if (signal.aborted) throw new Error(`task ${taskId} did not end; saw ${events.map(taskEventKind).join(', ')}`);
  return events;
}

/** Resolves with the error a core subscription ends with (a permission violation closes it). */
async function subscriptionError(bus: Bus, subject: string): Promise<Error> {
  const sub = natsHandles(bus).nc.subscribe(subject);
  try {
    // Without a violation the subscription stays open and this times out the test.
    for await (const _ of sub) break;
  } catch (err) {
    return err as Error;
  }
  throw new Error(`subscription to ${subject} ended without an error`);
}

beforeAll(async () => {
  const variables = NATS_USERS.map((u) => `${passwordVariableFor(u)}: ${JSON.stringify(passwords[u])}`).join('\n');
  nats = await startNatsServer({ configText: `${variables}\n${usersConf}` });
  stack = await startHermesStack({
    natsUrl: nats.url,
    scriptedResponder: responder,
    apiKeys: [{ key: API_KEY, user_id: 'alice', roles: ['user'] }],
    env: { LLM_MAX_RETRIES: '0', SHUTDOWN_TIMEOUT_MS: '3000', PLAN_MODE: 'auto' },
    serviceEnv: Object.fromEntries(HERMES_SERVICES.map((s) => [s, credentialsOf(s)])),
    // Four services start at once; on a loaded 2-core machine that can take longer than the default.
    readyTimeoutMs: 60_000,
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.drain().catch(() => {})));
  await stack?.stop();
  await nats?.stop();
});

describe('generated NATS users: every service works as its own user', () => {
  it('a task submitted by the submitter user is planned, calls a tool and completes, and the submitter reads its state', async () => {
    const submitter = await connectAs('submitter');
    const { taskId } = await submitTask(
      submitter,
      { user_id: 'team-a', goal: 'prove least privilege works' },
      { team: DEFAULT_TEAM, source: '/teams/a', id: randomUUID() },
    );
    submitted = taskId;
    const events = await collect(submitter, taskId);
    expect(events.map(taskEventKind)).toEqual(expect.arrayContaining(['accepted', 'planned', 'started', 'completed']));
    const completed = taskEventData(events.at(-1)!, 'completed');
    expect(completed?.result.output).toMatch(/^echo said .*for prove least privilege works/);
    const results = events.flatMap((e) => taskEventData(e, 'step') ?? []).filter((s) => s.kind === 'tool_result');
    expect(results.map((s) => (s.detail as { tool: string; status: string }).status)).toEqual(['ok']);

    const view = await request(submitter, contracts.teamTaskGet, { task_id: taskId }, { subject: submitter.subjects.teamTaskGet(DEFAULT_TEAM) });
    expect(view).toMatchObject({ status: 'completed', user_id: 'team-a' });
  });

  it('a task submitted over HTTP (gateway user) completes and its events come back over SSE', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ goal: 'over http as the gateway user' }),
    });
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    const sse = await fetch(`${stack.gatewayUrl}/v1/tasks/${task_id}/events`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const text = await sse.text();
    expect(text).toContain('event: completed');
    const status = await fetch(`${stack.gatewayUrl}/v1/tasks/${task_id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(await status.json()).toMatchObject({ task_id, status: 'completed' });
  });

  it('the hermes CLI as the cli user runs a task, and shows a task, its audit records and the LLM pools', async () => {
    const hermes = async (...args: string[]) =>
      (
        await promisify(execFile)(process.execPath, [cliEntry, ...args], {
          env: { ...process.env, NATS_URL: nats.url, ...credentialsOf('cli') },
          timeout: 30_000,
        })
      ).stdout;
    expect(await hermes('run', 'a task from the operator')).toMatch(/echo said .*for a task from the operator/);
    expect(await hermes('status', submitted)).toMatch(/completed/);
    expect(await hermes('audit', submitted)).toMatch(/echo/);
    expect(await hermes('llm', 'status')).toMatch(/scripted-demo/);
    // For a user of a team: submitted on the team's subject, listed on its list subject, and its
    // remember call (after a trusted echo) written with provenance model.
    expect(await hermes('run', 'a team task from the operator and remember it', '--team', 'team-x', '--user', 'ops-x')).toMatch(/echo said .*remembered/);
    expect(JSON.parse(await hermes('tasks', '--team', 'team-x', '--user', 'ops-x', '--json'))).toMatchObject({
      tasks: [{ user_id: 'ops-x', team: 'team-x', status: 'completed' }],
    });
    await eventually(
      async () => /model\s+The operator proved least privilege/.test(await hermes('memory', 'list', 'ops-x', '--team', 'team-x')),
      15_000,
      "ops-x's memory",
    );
    // Several CLI processes, each a cold Node start: generous on a loaded machine.
  }, 90_000);

  it('no service was refused anything on the way (nats-server logged no permission violation)', () => {
    expect(violations()).toEqual([]);
  });
});

describe('generated NATS users: each is denied what it should not do', () => {
  it('the toolbus user cannot publish runtime results, and its log says what was refused', async () => {
    const logLines: string[] = [];
    const toolbus = await connectAs('toolbus', { logLines });
    const from = nats.logs.length;
    await expect(natsHandles(toolbus).js.publish(toolbus.subjects.runtimeResults, encodeJson({ forged: true }), { timeout: 2000 })).rejects.toThrow(
      /permissions violation for publish to "hermes\.runtime\.results"/i,
    );
    expect(await loggedViolation(from, /User "toolbus", Subject "hermes\.runtime\.results"/)).toMatch(/Publish Violation/);
    // The bus logs the connection's error with the server's text, so an operator sees the refused subject.
    expect(logLines.join('')).toMatch(/"msg":"NATS error: Permissions Violation for Publish to \\"hermes\.runtime\.results\\""/i);
  });

  it('the submitter cannot forge a task event, and cannot read the audit stream or the runtime jobs', async () => {
    const submitter = await connectAs('submitter');
    await expect(
      natsHandles(submitter).js.publish(submitter.subjects.taskEvents(DEFAULT_TEAM, 't_0123'), encodeJson({ forged: true }), { timeout: 2000 }),
    ).rejects.toThrow(/permissions violation for publish/i);
    // Reading a stream means creating a consumer on it: the JetStream API request itself is refused.
    const audit = submitter.subjects.streams.toolAudit;
    await expect(natsHandles(submitter).jsm.streams.info(audit)).rejects.toThrow(denied('Publish', `$JS.API.STREAM.INFO.${audit}`));
    await expect(natsHandles(submitter).jsm.consumers.add(audit, { filter_subject: submitter.subjects.toolAuditAll })).rejects.toThrow(
      denied('Publish', `$JS.API.CONSUMER.CREATE.${audit}`),
    );
    // Neither as a plain subscription nor by pulling from the runtime's durable consumer.
    expect((await subscriptionError(submitter, submitter.subjects.runtimeJobs)).message).toMatch(
      /permissions violation for subscription to "hermes\.runtime\.jobs"/i,
    );
    const jobs = `${submitter.subjects.streams.runtimeJobs}.${submitter.subjects.consumers.runtimeJobs}`;
    await expect(natsHandles(submitter).js.consumers.get(submitter.subjects.streams.runtimeJobs, submitter.subjects.consumers.runtimeJobs)).rejects.toThrow(
      denied('Publish', `$JS.API.CONSUMER.INFO.${jobs}`),
    );
  });

  it("the submitter cannot read task state from KV, nor other users' replies", async () => {
    const submitter = await connectAs('submitter');
    const tasksKv = `$JS.API.DIRECT.GET.KV_${submitter.subjects.buckets.tasks}`;
    await expect(natsHandles(submitter).nc.request(tasksKv, encodeJson({ last_by_subj: '$KV.hermes_tasks.x' }), { timeout: 1500 })).rejects.toThrow(
      denied('Publish', tasksKv),
    );
    expect((await subscriptionError(submitter, `${inboxPrefixFor('gateway')}.>`)).message).toMatch(/permissions violation for subscription/i);
    expect((await subscriptionError(submitter, '_INBOX.>')).message).toMatch(/permissions violation for subscription/i);
  });

  it('a service cannot impersonate another: the gateway may not answer toolbus calls, the dispatcher may not call tools', async () => {
    const gateway = await connectAs('gateway');
    expect((await subscriptionError(gateway, gateway.subjects.toolCall)).message).toMatch(/permissions violation for subscription to "hermes\.toolbus\.call"/i);
    const dispatcher = await connectAs('dispatcher');
    await expect(natsHandles(dispatcher).nc.request(dispatcher.subjects.toolCall, encodeJson({}), { timeout: 1500 })).rejects.toThrow(
      denied('Publish', dispatcher.subjects.toolCall),
    );
  });

  it('a client without its own inbox prefix cannot even start (its reply inbox is refused), and a wrong password is refused', async () => {
    const nc = await connect({ servers: nats.url, user: 'memory', pass: passwords.memory });
    try {
      // Every service's start-up asks the JetStream API for account info; the reply inbox is what fails.
      await expect(nc.request('$JS.API.INFO', undefined, { timeout: 1500 })).rejects.toThrow(/permissions violation for subscription to "_INBOX\./i);
    } finally {
      await nc.close();
    }
    await expect(connectAs('runtime', { password: 'not-the-password' })).rejects.toThrow(/authorization violation/i);
  });
});
