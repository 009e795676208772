import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bus, REPLAY_OF_HEADER, startWorkConsumer, submitTask, type WorkConsumer } from '@hermes/bus';
import { DEFAULT_TEAM, DeadLetter, validate } from '@hermes/contracts';
import { inboxPrefixFor, NATS_USERS, passwordVariableFor, type NatsUser } from '@hermes/contracts/nats-permissions';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, eventually, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { runHermes } from './cli-runner.js';
import { natsHandles } from '@hermes/bus/internal';

// On a nats-server with the generated least-privilege users: the dispatcher user dead-letters
// submissions its handler cannot take, and the cli user lists, shows and replays them.
const usersConf = readFileSync(fileURLToPath(new URL('../../../deploy/nats/hermes-users.conf', import.meta.url)), 'utf8');
const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, randomBytes(12).toString('hex')])) as Record<NatsUser, string>;
const cliEnv = { NATS_USER: 'cli', NATS_PASSWORD: passwords.cli, NATS_INBOX_PREFIX: inboxPrefixFor('cli') };

let nats: NatsServerHandle;
const buses: Bus[] = [];
let intake: WorkConsumer;
/** Goals the intake stand-in took, with the replay header they came with. */
const handled: { goal: string; replayOf: string | undefined }[] = [];
let fixed = false;

async function connectAs(user: NatsUser): Promise<Bus> {
  const bus = await Bus.connect({
    servers: nats.url,
    name: `dl-cli-test-${user}`,
    logger: createLogger({ service: 'dl-cli-test', level: 'silent' }),
    user,
    password: passwords[user],
    inboxPrefix: inboxPrefixFor(user),
    waitOnFirstConnect: false,
  });
  buses.push(bus);
  return bus;
}

const hermes = (...argv: string[]) => runHermes(nats.url, argv, cliEnv);
const violations = () => nats.logs.filter((l) => /Violation/i.test(l));

beforeAll(async () => {
  const variables = NATS_USERS.map((u) => `${passwordVariableFor(u)}: ${JSON.stringify(passwords[u])}`).join('\n');
  nats = await startNatsServer({ configText: `${variables}\n${usersConf}` });
  const dispatcher = await connectAs('dispatcher');
  await dispatcher.ensureStreams(['taskSubmit', 'taskEvents', 'deadLetters']);
  await dispatcher.ensureConsumers(['dispatcherIntake']);
  // The intake's stand-in: a submission whose goal says poison blows the stack, until "fixed".
  intake = await startWorkConsumer(
    dispatcher,
    { stream: dispatcher.subjects.streams.taskSubmit, durable: dispatcher.subjects.consumers.dispatcherIntake },
    async (msg) => {
      const goal = (JSON.parse(new TextDecoder().decode(msg.data)) as { data: { goal: string } }).data.goal;
      if (goal.startsWith('poison') && !fixed) throw new RangeError('Maximum call stack size exceeded');
      handled.push({ goal, replayOf: msg.headers?.get(REPLAY_OF_HEADER) || undefined });
    },
  );
  const submitter = await connectAs('submitter');
  await submitTask(submitter, { user_id: 'team-a', goal: 'poison one' }, { team: DEFAULT_TEAM, source: '/teams/a', id: 'e1' });
  await submitTask(submitter, { user_id: 'team-a', goal: 'poison two' }, { team: DEFAULT_TEAM, source: '/teams/a', id: 'e2' });
  await submitTask(submitter, { user_id: 'team-a', goal: 'fine' }, { team: DEFAULT_TEAM, source: '/teams/a', id: 'e3' });
  await eventually(
    async () => ((await natsHandles(dispatcher).jsm.streams.info(dispatcher.subjects.streams.deadLetters)).state.messages === 2 ? true : undefined),
    15_000,
    'two dead letters',
  );
  await eventually(() => (handled.length === 1 ? true : undefined), 15_000, 'the good submission');
}, 60_000);

afterAll(async () => {
  await intake?.stop(100);
  await Promise.all(buses.map((b) => b.drain().catch(() => {})));
  await cleanupAll();
});

describe('hermes deadletter', () => {
  it('list shows each dead letter with where it came from and why, latest last', async () => {
    const res = await hermes('deadletter', 'list');

    expect(res.code).toBe(0);
    const [header, ...rows] = res.stdout.trim().split('\n');
    expect(header).toMatch(/^SEQ\s+DEAD-LETTERED\s+STREAM\s+STREAM SEQ\s+CONSUMER\s+DELIVERIES\s+ERROR$/);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^1\s+\S+Z\s+HERMES_TASK_SUBMIT\s+1\s+dispatcher-intake\s+1\s+internal: Maximum call stack size exceeded$/);
    expect(rows[1]).toMatch(/^2\s+.*HERMES_TASK_SUBMIT\s+2\s+/);
  });

  it('list --stream and --limit keep the latest of one stream; another stream has none', async () => {
    const latest = await hermes('deadletter', 'list', '--stream', 'HERMES_TASK_SUBMIT', '--limit', '1', '--json');
    expect(latest.code).toBe(0);
    const lines = latest.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number } & DeadLetter);
    expect(lines.map((l) => [l.seq, l.stream_seq])).toEqual([[2, 2]]);

    const none = await hermes('deadletter', 'list', '--stream', 'HERMES_RUNTIME_JOBS');
    expect(none).toMatchObject({ code: 0, stdout: '' });
    expect(none.stderr).toContain('no dead letters from HERMES_RUNTIME_JOBS');
  });

  it('show prints the record with its headers and decoded body, or the record as JSON', async () => {
    const text = await hermes('deadletter', 'show', '1');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('HERMES_TASK_SUBMIT seq 1 (consumer dispatcher-intake)');
    expect(text.stdout).toMatch(/error:\s+internal: Maximum call stack size exceeded \(not retryable\)/);
    expect(text.stdout).toMatch(/^ {2}Nats-Msg-Id: t_[0-9a-f]{32}$/m);
    expect(text.stdout).toContain('"goal": "poison one"');

    const json = await hermes('deadletter', 'show', '1', '--json');
    const { seq, ...record } = JSON.parse(json.stdout) as { seq: number };
    expect(seq).toBe(1);
    expect(validate(DeadLetter, record).ok).toBe(true);
  });

  it('replay re-drives the original message once its cause is fixed; a second replay is dropped as a duplicate', async () => {
    fixed = true;
    const first = await hermes('deadletter', 'replay', '1');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^replayed dead letter 1 to hermes\.tasks\.submit\.default: HERMES_TASK_SUBMIT seq 4 \(Nats-Msg-Id replay:1:t_[0-9a-f]{32}\)$/m,
    );
    await eventually(() => (handled.some((h) => h.goal === 'poison one') ? true : undefined), 15_000, 'the replayed submission');
    expect(handled.find((h) => h.goal === 'poison one')?.replayOf).toBe('HERMES_TASK_SUBMIT:1');

    const again = await hermes('deadletter', 'replay', '1');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('dead letter 1 was already replayed (HERMES_TASK_SUBMIT seq 4');
    expect(handled.filter((h) => h.goal === 'poison one')).toHaveLength(1);
  });

  it('a sequence that holds no dead letter is an error, a bad one a usage error', async () => {
    expect(await hermes('deadletter', 'show', '99')).toMatchObject({ code: 1, stderr: expect.stringContaining('no dead letter 99') });
    expect(await hermes('deadletter', 'replay', 'abc')).toMatchObject({ code: 2, stderr: expect.stringContaining('is not a dead-letter sequence') });
  });

  it('needed no permission the generated users lack', () => {
    expect(violations()).toEqual([]);
  });
});
