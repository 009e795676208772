import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { contracts, taskEventData, taskEventKind, type TaskEvent, type TaskRequest, type TaskView } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { eventually, lastUserMessageText, type ChatRequestBody, type RecordedRequest, type ScriptedResponse } from '@hermes/testkit';
import { replicasOf, startStack, type Stack } from './stack.js';
import { goalOf } from './model-script.js';
import { kinds } from './events.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

const PLANNER = 'scripted-planner';
const REVIEWER = 'scripted-reviewer';
let stack: Stack;
let restarts = 0;

/** Planner answers by the goal planned, reviewer answers by the goal reviewed (n-th review of it), workers by their subtask intent. */
const planners = new Map<string, () => ScriptedResponse>();
const reviewers = new Map<string, (n: number) => ScriptedResponse>();
const workers = new Map<string, (req: RecordedRequest) => ScriptedResponse>();
const systemLine = (body: ChatRequestBody, re: RegExp) => {
  const system = body.messages?.find((m) => m.role === 'system');
  return re.exec(typeof system?.content === 'string' ? system.content : '')?.[1];
};
const planRequests = (goal: string) => stack.llm.requests.filter((r) => r.body.model === PLANNER && systemLine(r.body, /^Goal to plan: (.*)$/m) === goal);
const reviewRequests = (goal: string) => stack.llm.requests.filter((r) => r.body.model === REVIEWER && systemLine(r.body, /^Goal to review: (.*)$/m) === goal);
const workRequests = (intent: string) => stack.llm.requests.filter((r) => r.body.model !== PLANNER && r.body.model !== REVIEWER && goalOf(r.body) === intent);
const plan = (subtasks: { id: string; intent: string }[], o: { review?: boolean } = {}) => ({
  content: JSON.stringify({ subtasks: subtasks.map((s) => ({ depends_on: [], ...s })), ...o }),
});
const verdict = (v: object) => ({ content: JSON.stringify(v) });

beforeAll(async () => {
  stack = await startStack({
    env: { PLAN_MODE: 'auto', HERMES_MODEL_PLANNER: PLANNER, HERMES_MODEL_REVIEWER: REVIEWER, DISPATCHER_SWEEP_MS: '250', REVIEW_ROUNDS: '1' },
    // On a 2-core machine shared with other suites a process took over 60 s to report ready (twice); not what is tested here.
    readyTimeoutMs: 180_000,
  });
  const counts = new Map<string, number>();
  stack.llm.setResponder((req) => {
    if (req.body.model === PLANNER) return planners.get(systemLine(req.body, /^Goal to plan: (.*)$/m) ?? '')?.() ?? { content: 'no plan' };
    if (req.body.model === REVIEWER) {
      const goal = systemLine(req.body, /^Goal to review: (.*)$/m) ?? '';
      const n = counts.get(goal) ?? 0;
      counts.set(goal, n + 1);
      return reviewers.get(goal)?.(n) ?? { content: 'no verdict' };
    }
    const intent = goalOf(req.body) ?? '';
    return workers.get(intent)?.(req) ?? { content: `out:${intent}` };
  });
}, 600_000);

afterAll(async () => {
  await stack?.stop();
});

const completed = (events: TaskEvent[]) => taskEventData(events.at(-1)!, 'completed');
const reviewKinds = (events: TaskEvent[]) => kinds(events).filter((k) => k.startsWith('review_') || k === 'completed' || k === 'failed');
const count = (events: TaskEvent[], kind: string) => events.filter((e) => taskEventKind(e) === kind).length;

/** Two independent subtasks; the submission asks for a review. */
function twoSubtasks(goal: string, prefix: string): TaskRequest {
  planners.set(goal, () =>
    plan([
      { id: 'a', intent: `${prefix}-a` },
      { id: 'b', intent: `${prefix}-b` },
    ]),
  );
  return { user_id: 'alice', goal, review: true };
}

/** The stored task, read as the dispatcher wrote it. */
async function stored(taskId: string): Promise<TaskView | undefined> {
  const entry = await (await stack.bus.kv('tasks')).get(taskId);
  return entry?.value?.length ? (entry.json() as TaskView) : undefined;
}

/** SIGKILLs every dispatcher and starts a fresh one: whatever the dead one had in hand, only the stored state remains. */
async function replaceDispatchers(): Promise<void> {
  for (const d of await replicasOf(stack, 'dispatcher')) await d.kill();
  await stack.startReplica('dispatcher', `dispatcher-r${++restarts}`);
}

describe('reviewer step', () => {
  it('sends one subtask back once with its notes and accepts the second attempt; the sibling runs once', async () => {
    const goal = 'review: fix one subtask then accept';
    const task = twoSubtasks(goal, 'fix');
    workers.set('fix-b', (req) => ({ content: lastUserMessageText(req.body).includes('cite the source') ? 'b with source' : 'b bare' }));
    reviewers.set(goal, (n) =>
      n === 0
        ? verdict({ verdict: 'revise', subtasks: [{ id: 'b', notes: 'cite the source' }] })
        : verdict({ verdict: 'accept', answer: 'merged: out:fix-a + b with source' }),
    );
    const taskId = await submit(stack.bus, task);
    const events = await watchTask(stack.bus, taskId, 150_000).done;

    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'merged: out:fix-a + b with source' });
    expect(completed(events)?.result.review).toEqual({ accepted: true, rounds: 2 });
    expect(reviewKinds(events)).toEqual(['review_started', 'review_verdict', 'review_started', 'review_verdict', 'completed']);
    expect(events.flatMap((e) => taskEventData(e, 'review_verdict') ?? []).map((d) => [d.round, d.verdict, d.subtasks?.map((s) => s.id)])).toEqual([
      [1, 'revise', ['b']],
      [2, 'accept', undefined],
    ]);
    // Counted at the model: a once, b twice (the second time with the notes and its first output), two reviews.
    expect(workRequests('fix-a')).toHaveLength(1);
    expect(workRequests('fix-b')).toHaveLength(2);
    const second = lastUserMessageText(workRequests('fix-b')[1]!.body);
    expect(second).toContain('cite the source');
    expect(second).toContain('b bare');
    expect(reviewRequests(goal)).toHaveLength(2);
    // The second review read b's new output.
    expect(lastUserMessageText(reviewRequests(goal)[1]!.body)).toContain('b with source');
    expect(completed(events)?.subtasks?.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['a', 'succeeded', 1],
      ['b', 'succeeded', 2],
    ]);
  }, 180_000);

  it('accepts on the first round: the reviewer answer is the result and nothing runs again', async () => {
    const goal = 'review: accept at once';
    const taskId = await submit(stack.bus, twoSubtasks(goal, 'once'));
    reviewers.set(goal, () => verdict({ verdict: 'accept', answer: 'all good' }));
    const events = await watchTask(stack.bus, taskId, 150_000).done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'all good' });
    expect(completed(events)?.result.review).toEqual({ accepted: true, rounds: 1 });
    expect(reviewKinds(events)).toEqual(['review_started', 'review_verdict', 'completed']);
    expect([workRequests('once-a').length, workRequests('once-b').length, reviewRequests(goal).length]).toEqual([1, 1, 1]);
  }, 180_000);

  it("rounds run out (a planner's review, REVIEW_ROUNDS=1): completed with the last outputs composed and review.accepted=false", async () => {
    const goal = 'review: never satisfied';
    planners.set(goal, () =>
      plan(
        [
          { id: 'a', intent: 'never-a' },
          { id: 'b', intent: 'never-b' },
        ],
        { review: true },
      ),
    );
    reviewers.set(goal, (n) => verdict({ verdict: 'revise', subtasks: [{ id: 'a', notes: `try harder ${n + 1}` }] }));
    workers.set(goal, () => ({ content: 'composed from the last outputs' }));
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const events = await watchTask(stack.bus, taskId, 150_000).done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'composed from the last outputs' });
    expect(completed(events)?.result.review).toEqual({ accepted: false, rounds: 2, notes: [{ id: 'a', notes: 'try harder 2' }] });
    expect(taskEventData(events.filter((e) => taskEventKind(e) === 'review_verdict').at(-1)!, 'review_verdict')?.exhausted).toBe(true);
    expect([workRequests('never-a').length, workRequests('never-b').length, reviewRequests(goal).length]).toEqual([2, 1, 2]);
    // The compose job (the worker model, anchored on the task's goal) ran once.
    expect(workRequests(goal)).toHaveLength(1);
  }, 180_000);

  it('a malformed verdict goes back once with the error; a second one fails the task review_invalid', async () => {
    const goal = 'review: cannot answer JSON';
    const taskId = await submit(stack.bus, twoSubtasks(goal, 'bad'));
    reviewers.set(goal, (n) => (n === 0 ? { content: 'Looks fine to me!' } : verdict({ verdict: 'revise', subtasks: [{ id: 'ghost', notes: 'n' }] })));
    const events = await watchTask(stack.bus, taskId, 150_000).done;
    expect(outcomeOf(events)).toMatchObject({ kind: 'failed', error: 'review_invalid' });
    expect(reviewRequests(goal)).toHaveLength(2);
    expect(lastUserMessageText(reviewRequests(goal)[1]!.body)).toContain('invalid_verdict_errors');
    const failed = taskEventData(events.at(-1)!, 'failed')!;
    expect(JSON.stringify(failed.error.details)).toContain('ghost');
    expect([workRequests('bad-a').length, workRequests('bad-b').length]).toEqual([1, 1]);
  }, 180_000);

  it('dispatcher SIGKILLed right after the revise verdict is stored: the task completes once, b runs twice, a once', async () => {
    const goal = 'review: crash after the verdict';
    const taskId = await submit(stack.bus, twoSubtasks(goal, 'crashv'));
    reviewers.set(goal, (n) =>
      n === 0 ? verdict({ verdict: 'revise', subtasks: [{ id: 'b', notes: 'again' }] }) : verdict({ verdict: 'accept', answer: 'ok after crash' }),
    );
    const watch = watchTask(stack.bus, taskId, 200_000);
    // Polled tight so the kill lands as close to the write as the test can see it; whether the
    // dead replica already published b's job or not, the outcome and the counts must be the same.
    let view: TaskView | undefined;
    await eventually(
      async () => {
        view = await stored(taskId);
        return (view?.plan?.review?.notes?.length ?? 0) > 0;
      },
      90_000,
      'the stored revise verdict',
    );
    await replaceDispatchers();
    if (process.env.HERMES_CAPTURE_FIXTURES) writeFileSync(`${process.env.HERMES_CAPTURE_FIXTURES}/revised.json`, JSON.stringify(view, null, 2));
    const events = await watch.done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'ok after crash' });
    expect(count(events, 'completed')).toBe(1);
    expect([planRequests(goal).length, workRequests('crashv-a').length, workRequests('crashv-b').length, reviewRequests(goal).length]).toEqual([1, 1, 2, 2]);
    expect(completed(events)?.result.review).toEqual({ accepted: true, rounds: 2 });
    if (process.env.HERMES_CAPTURE_FIXTURES)
      writeFileSync(`${process.env.HERMES_CAPTURE_FIXTURES}/accepted.json`, JSON.stringify(await stored(taskId), null, 2));
  }, 240_000);

  it('dispatcher SIGKILLed while the review job runs: its result reaches the new dispatcher, reviewed once, completed once', async () => {
    const goal = 'review: crash during the review';
    const taskId = await submit(stack.bus, twoSubtasks(goal, 'crashr'));
    // Slow enough that the dispatcher is dead before the reviewer answers.
    reviewers.set(goal, () => ({ ...verdict({ verdict: 'accept', answer: 'reviewed across a crash' }), delayMs: 3000 }));
    const watch = watchTask(stack.bus, taskId, 200_000);
    await eventually(() => reviewRequests(goal).length === 1, 90_000, 'the review request at the model');
    if (process.env.HERMES_CAPTURE_FIXTURES)
      writeFileSync(`${process.env.HERMES_CAPTURE_FIXTURES}/reviewing.json`, JSON.stringify(await stored(taskId), null, 2));
    await replaceDispatchers();
    const events = await watch.done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'reviewed across a crash' });
    expect(count(events, 'completed')).toBe(1);
    expect(count(events, 'review_started')).toBe(1);
    expect([workRequests('crashr-a').length, workRequests('crashr-b').length, reviewRequests(goal).length]).toEqual([1, 1, 1]);
    expect(await request(stack.bus, contracts.taskGet, { task_id: taskId })).toMatchObject({
      status: 'completed',
      plan: { stage: 'done', review: { round: 1, accepted: true } },
    });
  }, 240_000);
});
