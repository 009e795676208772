import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Bus, ReplyError, consumeContract, serve, type WorkConsumer } from '@hermes/bus';
import {
  DEFAULT_TEAM,
  contracts,
  makeTaskEvent,
  taskIdFor,
  wireError,
  type TaskEventDataByKind,
  type TaskEventKind,
  type TaskRequest,
  type TaskView,
} from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/index.js';
import { captureOutput } from './cli-runner.js';

const logger = createLogger({ service: 'cli-test', level: 'silent' });
let natsUrl: string;
let bus: Bus;
let intake: WorkConsumer;
const submissions: { taskId: string; source: string; data: TaskRequest }[] = [];
const views = new Map<string, TaskView>();

/**
 * Stands in for the dispatcher: takes submissions off the real submit stream and publishes what a
 * task would go through; a goal starting with "fail" fails. Also answers taskGet from `views`.
 */
beforeAll(async () => {
  const nats = await startNatsServer();
  natsUrl = nats.url;
  bus = await Bus.connect({ servers: natsUrl, name: 'cli-test-dispatcher', logger });
  await bus.ensureStreams(['taskSubmit', 'taskEvents']);
  await bus.ensureConsumers(['dispatcherIntake']);
  intake = await consumeContract(
    bus,
    contracts.taskSubmit,
    { stream: bus.subjects.streams.taskSubmit, durable: bus.subjects.consumers.dispatcherIntake },
    async (event) => {
      const taskId = taskIdFor(DEFAULT_TEAM, event.source, event.id);
      submissions.push({ taskId, source: event.source, data: event.data });
      const publish = async <K extends TaskEventKind>(kind: K, data: TaskEventDataByKind[K]) =>
        bus.publish(contracts.taskEvents, makeTaskEvent(kind, { id: `${taskId}:${kind}`, source: 'hermes/dispatcher', taskId, data }), {
          subject: bus.subjects.taskEvents(DEFAULT_TEAM, taskId),
        });
      const { user_id, goal } = event.data;
      const session_id = event.data.session_id ?? 'sess-1';
      await publish('accepted', { task_id: taskId, user_id, session_id, goal, source_event: { source: event.source, id: event.id } });
      await publish('step', {
        task_id: taskId,
        subtask_id: 'st1',
        step: 1,
        kind: 'llm_call',
        model: 'test-model',
        usage: { input_tokens: 3, output_tokens: 4 },
      });
      if (goal.startsWith('fail')) {
        await publish('failed', { task_id: taskId, error: wireError('llm_error', 'the model refused') });
      } else {
        await publish('completed', { task_id: taskId, result: { output: `done: ${goal}` }, usage: { input_tokens: 3, output_tokens: 4 } });
      }
    },
  );
  serve(bus, contracts.taskGet, async (req) => {
    const view = views.get(req.task_id);
    if (!view) throw new ReplyError(wireError('not_found', `task ${req.task_id} not found`));
    return view;
  });
});

afterAll(async () => {
  await intake?.stop(1000);
  await bus?.drain();
  await cleanupAll();
});

async function hermes(...argv: string[]) {
  const stdout = captureOutput();
  const stderr = captureOutput();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: { NATS_URL: natsUrl, HERMES_USER: 'carol' } });
  return { code, stdout, stderr };
}

describe('hermes run', () => {
  it('submits the goal, prints each event as a line and exits 0 on completed', async () => {
    const { code, stdout } = await hermes('run', 'write a haiku', '--user', 'bob', '--session', 'sess-9');
    expect(code).toBe(0);
    const [first, ...events] = stdout.lines();
    const taskId = first!.replace(/^task /, '');
    expect(events).toEqual(['accepted session=sess-9', 'step llm_call model=test-model tokens=3+4 subtask=st1#1', 'completed: done: write a haiku']);
    const submitted = submissions.find((s) => s.taskId === taskId);
    expect(submitted?.data).toEqual({ user_id: 'bob', goal: 'write a haiku', session_id: 'sess-9' });
    expect(submitted?.source).toMatch(/^\/hermes\/cli\//);
  });

  it('takes the user from HERMES_USER and exits 1 when the task fails', async () => {
    const { code, stdout } = await hermes('run', 'fail on purpose');
    expect(code).toBe(1);
    expect(stdout.lines().at(-1)).toBe('failed: llm_error: the model refused');
    const taskId = stdout.lines()[0]!.replace(/^task /, '');
    expect(submissions.find((s) => s.taskId === taskId)?.data.user_id).toBe('carol');
  });

  it('prints raw events as JSON lines with --json, the task id going to stderr', async () => {
    const { code, stdout, stderr } = await hermes('run', 'json please', '--json');
    expect(code).toBe(0);
    const events = stdout.lines().map((l) => JSON.parse(l) as { type: string; subject: string });
    expect(events.map((e) => e.type)).toEqual(['io.hermes.task.accepted', 'io.hermes.task.step', 'io.hermes.task.completed']);
    expect(stderr.text()).toContain(`task ${events[0]!.subject}`);
  });
});

describe('hermes status', () => {
  it('prints a summary of the task, or the TaskView as JSON', async () => {
    const now = new Date().toISOString();
    const view: TaskView = {
      task_id: 't_status_1',
      user_id: 'bob',
      session_id: 'sess-1',
      goal: 'count sheep',
      status: 'completed',
      created_at: now,
      updated_at: now,
      source_event: { source: '/x', id: '1' },
      attempts: 1,
      usage: { input_tokens: 10, output_tokens: 2 },
      result: { output: '42 sheep' },
    };
    views.set(view.task_id, view);
    const pretty = await hermes('status', 't_status_1');
    expect(pretty.code).toBe(0);
    expect(pretty.stdout.text()).toMatch(/^status\s+completed$/m);
    expect(pretty.stdout.text()).toMatch(/^result\s+42 sheep$/m);
    const json = await hermes('status', 't_status_1', '--json');
    expect(JSON.parse(json.stdout.text())).toEqual(view);
  });

  it('exits 1 with a message for a task that does not exist', async () => {
    const { code, stderr } = await hermes('status', 't_missing');
    expect(code).toBe(1);
    expect(stderr.text()).toContain('task t_missing not found');
  });
});

describe('usage', () => {
  it('prints usage for --help and for no arguments', async () => {
    for (const argv of [[], ['--help']]) {
      const { code, stdout } = await hermes(...argv);
      expect(code).toBe(0);
      expect(stdout.text()).toContain('usage: hermes <command>');
      expect(stdout.text()).toMatch(/^ {2}run "<goal>"/m);
    }
    const help = await hermes('run', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout.text()).toContain('--session <id>');
  });

  it('exits 2 with a clear message for bad flags, missing arguments and unknown commands', async () => {
    const badFlag = await hermes('run', 'goal', '--bogus');
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr.text()).toMatch(/hermes run: .*--bogus/);
    const missing = await hermes('run');
    expect(missing.code).toBe(2);
    expect(missing.stderr.text()).toContain('missing "<goal>"');
    const unknown = await hermes('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.text()).toContain('unknown command "frobnicate"');
    const badId = await hermes('status', 'not.an.id');
    expect(badId.code).toBe(2);
    const badUser = await hermes('run', 'goal', '--user', 'has space');
    expect(badUser.code).toBe(2);
  });

  it('ships a built bin with a node shebang', () => {
    const bin = fileURLToPath(new URL('../dist/main.js', import.meta.url));
    expect(readFileSync(bin, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    const result = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('usage: hermes <command>');
    const bad = spawnSync(process.execPath, [bin, 'status'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
  });
});
