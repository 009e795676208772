import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecording, readRecording, request } from '@hermes/bus';
import { natsHandles } from '@hermes/bus/internal';
import { DEFAULT_TEAM, contracts, type EvalResults, type RecordingEntry } from '@hermes/contracts';
import { ModelScript, callTools } from './model-script.js';
import { replicasOf, startStack, type Stack } from './stack.js';
import { outcomeOf, runTask } from './tasks.js';

/** What `hermes replay --json` prints (the CLI is a bin, not a library: the fields the tests read). */
interface ReplayReport {
  replay_task: string;
  same: boolean;
  same_tool_calls: boolean;
  same_answer: boolean;
  first_difference?: { step: number; where: string; diff?: string };
  replay: { final_answer?: string; status: string };
}

// One stack for the file: recording, replay, the standard suite and (last) a deliberately broken runtime.
let stack: Stack;
let model: ModelScript;

beforeAll(async () => {
  stack = await startStack();
  model = new ModelScript(stack.llm);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const cliEntry = fileURLToPath(new URL('../../tools/cli/dist/main.js', import.meta.url));
const suitePath = fileURLToPath(new URL('../../evals/standard.yaml', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'evals-e2e-'));

/** The built `hermes` bin: exit code and both outputs. Generous timeout: a whole suite runs through every service on a loaded 2-core machine. */
function hermes(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliEntry, ...args], { env: { ...process.env, NATS_URL: stack.natsUrl }, timeout: 240_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Records a two-step task against the scripted model: date_add, then an answer quoting its result. */
async function recordDateTask(goal: string, user: string) {
  model.on(goal, [
    callTools({ name: 'date_add', arguments: { date: '2026-03-01', days: 7 } }),
    (req) => {
      const tool = req.body.messages?.filter((m) => m.role === 'tool').at(-1);
      const date = /"date":"([^"]+)"/.exec(typeof tool?.content === 'string' ? tool.content : '')?.[1] ?? 'unknown';
      return { content: `A week after 2026-03-01 is ${date}.` };
    },
  ]);
  const { taskId, events } = await runTask(stack.bus, { user_id: user, goal, tools: ['date_add'], record: true });
  expect(outcomeOf(events).kind).toBe('completed');
  return taskId;
}

/** Replaces a task's recording by an edited copy of it (what a test does in place of yesterday's production run). */
async function rewriteRecording(taskId: string, user: string, edit: (e: RecordingEntry) => RecordingEntry) {
  const entries = await readRecording(stack.bus, taskId);
  await natsHandles(stack.bus).jsm.streams.purge(stack.bus.subjects.streams.recordings, { filter: stack.bus.subjects.recording(DEFAULT_TEAM, user, taskId) });
  for (const e of entries) await appendRecording(stack.bus, edit(structuredClone(e)));
}

describe('recording and replay', () => {
  it('records nothing unless the task, its user or the global setting asks', async () => {
    const goal = 'evals: unrecorded task';
    model.on(goal, [{ content: 'not recorded' }]);
    const { taskId } = await runTask(stack.bus, { user_id: 'eval-off', goal });
    expect(await readRecording(stack.bus, taskId)).toEqual([]);
    const recorded = await recordDateTask('evals: recorded task', 'eval-on');
    const kinds = (await readRecording(stack.bus, recorded)).map((e) => e.kind);
    expect(kinds).toEqual(['llm', 'tool', 'llm']);
    const show = await hermes(['record', 'show', recorded]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('date_add');
    expect(show.stdout).toContain('final answer: A week after 2026-03-01 is 2026-03-08.');
  }, 60_000);

  it('a recorded task replays through all services with the same tool calls and answer, without asking the model', async () => {
    const goal = 'evals: replay me';
    const source = await recordDateTask(goal, 'eval-replay');
    const asked = model.requests(goal).length;
    const replay = await hermes(['replay', source, '--json']);
    const report = JSON.parse(replay.stdout) as ReplayReport;
    expect(report).toMatchObject({ same: true, same_tool_calls: true, same_answer: true, replay: { status: 'completed' } });
    expect(report.replay.final_answer).toBe('A week after 2026-03-01 is 2026-03-08.');
    expect(replay.code).toBe(0);
    // Every answer came from the recording: the scripted model saw no request of the replay.
    expect(model.requests(goal).length).toBe(asked);
    const tool = (await readRecording(stack.bus, report.replay_task)).find((e) => e.kind === 'tool');
    expect(tool).toMatchObject({ kind: 'tool', replayed_from: 'recording', reply: { status: 'ok' } });
  }, 90_000);

  it('a system prompt that differs from the recorded one is a divergence at step 1 with a readable diff', async () => {
    const source = await recordDateTask('evals: prompt edit', 'eval-prompt');
    // As if yesterday's production ran an older system prompt: the recorded request's system message differs from today's.
    await rewriteRecording(source, 'eval-prompt', (e) => {
      if (e.kind !== 'llm') return e;
      const system = e.request.messages[0] as { role: string; content: string };
      system.content = system.content.replace('You are a Hermes agent working for an internal team.', 'You are a terse assistant.');
      e.request_hash = 'edited';
      return e;
    });
    const replay = await hermes(['replay', source]);
    expect(replay.code).toBe(1);
    expect(replay.stdout).toMatch(/first difference at step 1: \S+ step 1: the model request differs from the recording \(request_differs\)/);
    expect(replay.stdout).toContain('- [0] system: You are a terse assistant.');
    expect(replay.stdout).toContain('+ [0] system: You are a Hermes agent working for an internal team.');
  }, 90_000);

  it('a tool result changed in the recording changes the outcome, and the report says where', async () => {
    const source = await recordDateTask('evals: tool result edit', 'eval-tool');
    await rewriteRecording(source, 'eval-tool', (e) =>
      e.kind === 'tool' ? { ...e, reply: { ...e.reply, result: { date: '2026-12-24', weekday: 'Thursday' } } } : e,
    );
    const replay = await hermes(['replay', source, '--json']);
    const report = JSON.parse(replay.stdout) as ReplayReport;
    expect(replay.code).toBe(1);
    expect(report.same).toBe(false);
    expect(report.replay.status).toBe('failed');
    // Step 2's request carries the changed tool result, which the recorded step 2 never saw.
    expect(report.first_difference?.step).toBe(2);
    expect(report.first_difference?.where).toContain('the model request differs');
    expect(report.first_difference?.diff).toContain('2026-12-24');
    expect(report.first_difference?.diff).toContain('2026-03-08');
  }, 90_000);

  it('forgetting a user deletes their recordings and leaves other users alone', async () => {
    const mine = await recordDateTask('evals: forget me', 'eval-forget');
    const theirs = await recordDateTask('evals: keep me', 'eval-keep');
    const reply = await request(stack.bus, contracts.memoryForget, { user_id: 'eval-forget' });
    expect(reply.recordings_removed).toBe(3);
    expect(await readRecording(stack.bus, mine)).toEqual([]);
    expect((await readRecording(stack.bus, theirs)).length).toBe(3);
  }, 60_000);
});

describe('the standard suite', () => {
  let passing: EvalResults;

  it('passes against the scripted model', async () => {
    const run = await hermes(['eval', suitePath, '--out', join(outDir, 'good')]);
    passing = JSON.parse(readFileSync(join(outDir, 'good', 'results.json'), 'utf8')) as EvalResults;
    const failing = passing.cases.filter((c) => !c.passed).map((c) => ({ id: c.id, graders: c.graders.filter((g) => !g.passed) }));
    expect(failing).toEqual([]);
    expect(run.code).toBe(0);
    expect(passing.pass_rate).toBe(1);
    expect(passing.cases).toHaveLength(8);
    expect(readFileSync(join(outDir, 'good', 'results.md'), 'utf8')).toContain('| malformed-argument-self-correction | ✅ |');
  }, 300_000);

  it('a build that no longer feeds validation errors back fails the malformed-argument case, and eval compare flags it', async () => {
    expect(passing).toBeDefined();
    // The deliberately broken build: a runtime that tells the model only that a call failed, not why.
    for (const r of await replicasOf(stack, 'runtime')) await r.kill();
    await stack.startReplica('runtime', 'runtime-broken', { AGENT_TOOL_ERROR_DETAIL: 'none' });
    const run = await hermes(['eval', suitePath, '--out', join(outDir, 'broken'), '--case', 'malformed-argument-self-correction,tool-selection']);
    expect(run.code).toBe(1);
    const broken = JSON.parse(readFileSync(join(outDir, 'broken', 'results.json'), 'utf8')) as EvalResults;
    const malformed = broken.cases.find((c) => c.id === 'malformed-argument-self-correction');
    expect(malformed).toMatchObject({ passed: false, status: 'failed', error_code: 'loop_detected' });
    expect(broken.cases.find((c) => c.id === 'tool-selection')?.passed).toBe(true);

    const compare = await hermes(['eval', 'compare', join(outDir, 'good', 'results.json'), join(outDir, 'broken', 'results.json')]);
    expect(compare.code).toBe(1);
    expect(compare.stdout).toContain('REGRESSION malformed-argument-self-correction: passed before, fails now');
    expect(compare.stdout).not.toContain('REGRESSION tool-selection');
    expect(compare.stdout).toMatch(/pass rate 100 % → 50 %/);
  }, 300_000);
});
