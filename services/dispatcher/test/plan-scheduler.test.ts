import { describe, expect, it } from 'vitest';
import { wireError, type RuntimeJob, type RuntimeResult, type TaskView } from '@hermes/contracts';
import { advance, answerInput, applyResult, begin, cancel, initialPlan, NO_ANSWER, singlePlan, type Action } from '../src/plan-scheduler.js';
import { MAX_DEPENDENCY_OUTPUT_CHARS } from '../src/job-builder.js';
import { taskView, testPlanSettings } from './support.js';

const settings = testPlanSettings;
const ctx = (now = Date.now()) => ({ now, settings, roles: ['user'] });
const jobs = (actions: Action[]) => actions.flatMap((a) => (a.kind === 'job' ? [a.job] : []));
const usage = { input_tokens: 1, output_tokens: 1 };

function planned(): TaskView {
  return taskView({ task_id: 't_sched', status: 'running', plan: initialPlan('t_sched', Date.now()) });
}

function result(job: RuntimeJob, r: Partial<RuntimeResult>): RuntimeResult {
  return { job_id: job.job_id, task_id: job.task_id, subtask_id: job.subtask_id, attempt: 1, outcome: 'succeeded', usage, ...r };
}

const diamond = {
  subtasks: [
    { id: 'a', intent: 'A', depends_on: [] },
    { id: 'b', intent: 'B', depends_on: ['a'] },
    { id: 'c', intent: 'C', depends_on: ['a'] },
    { id: 'd', intent: 'D', depends_on: ['b', 'c'] },
  ],
};

describe('plan scheduler', () => {
  it("runs a diamond: A, then B and C together with A's output, then D with both, and D answers", () => {
    let v = planned();
    const planJob = { job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob;
    let step = applyResult(v, result(planJob, { plan: diamond }), ctx());
    expect(step.actions.map((a) => a.kind)).toEqual(['planned', 'job']);
    expect(jobs(step.actions).map((j) => j.subtask_id)).toEqual(['a']);
    v = step.view;

    step = applyResult(v, result(jobs(step.actions)[0]!, { output: 'out-a' }), ctx());
    const bc = jobs(step.actions);
    expect(bc.map((j) => j.subtask_id)).toEqual(['b', 'c']);
    expect(bc[0]!.inputs).toMatchObject({ dependencies: { a: 'out-a' } });
    expect(bc[0]!.inputs).not.toHaveProperty('depends_on');
    v = step.view;

    v = applyResult(v, result(bc[0]!, { output: 'out-b' }), ctx()).view;
    step = applyResult(v, result(bc[1]!, { output: 'out-c' }), ctx());
    const [d] = jobs(step.actions);
    expect(d!.inputs).toMatchObject({ dependencies: { b: 'out-b', c: 'out-c' } });

    step = applyResult(step.view, result(d!, { output: 'final' }), ctx());
    expect(step.view).toMatchObject({ status: 'completed', result: { output: 'final' } });
    expect(step.actions.map((a) => a.kind)).toEqual(['completed']);
    expect(step.view.usage).toEqual({ input_tokens: 5, output_tokens: 5 });
  });

  it('an agent job carries SUBTASK_TIMEOUT_MS for its runtime, and a job dispatched long ago is not timed out here: it may still be queued', () => {
    const started = begin(taskView({ task_id: 't_queued', status: 'accepted', plan: singlePlan('wait in the queue') }), ctx())!;
    const [job] = jobs(started.actions);
    expect(job).toMatchObject({ kind: 'agent', timeout_ms: settings.subtaskTimeoutMs });
    const dispatched = structuredClone(started.view);
    dispatched.plan!.subtasks[0]!.dispatched_at = new Date().toISOString();
    // Ten timeouts later the job may still wait behind the LLM cap; only its runtime knows when it started.
    const later = advance(dispatched, ctx(Date.now() + settings.subtaskTimeoutMs * 10));
    expect(later.actions).toEqual([]);
    expect(later.view.plan!.subtasks[0]).toMatchObject({ status: 'running', attempts: 1 });
  });

  it('a duplicate result changes nothing', () => {
    const v = planned();
    const planJob = { job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob;
    const step = applyResult(v, result(planJob, { plan: diamond }), ctx());
    const again = applyResult(step.view, result(planJob, { plan: diamond }), ctx());
    expect(again.actions).toEqual([]);
    expect(again.view).toBe(step.view);
  });

  it('an invalid plan goes back to the planner once with the errors, then the task fails plan_invalid', () => {
    const v = planned();
    const cyclic = {
      subtasks: [
        { id: 'a', intent: 'A', depends_on: ['b'] },
        { id: 'b', intent: 'B', depends_on: ['a'] },
      ],
    };
    const first = applyResult(v, result({ job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob, { plan: cyclic }), ctx());
    const [again] = jobs(first.actions);
    expect(again!.kind).toBe('plan');
    expect(again!.inputs?.invalid_plan_errors).toEqual([expect.stringMatching(/cycle/)]);
    const second = applyResult(first.view, result(again!, { plan: cyclic }), ctx());
    expect(second.view.error?.code).toBe('plan_invalid');
    expect(second.actions.map((a) => a.kind)).toEqual(['failed']);
  });

  it('a retryable failure is retried after a back-off; a permanent one is re-planned for it and its dependents', () => {
    let v = planned();
    let step = applyResult(v, result({ job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob, { plan: diamond }), ctx());
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { output: 'out-a' }), ctx());
    const [b, c] = jobs(step.actions);
    v = applyResult(step.view, result(c!, { output: 'out-c' }), ctx()).view;

    const now = Date.now();
    step = applyResult(v, result(b!, { outcome: 'failed', error: wireError('llm_unavailable', '503') }), ctx(now));
    expect(jobs(step.actions)).toEqual([]);
    expect(step.view.plan!.subtasks.find((s) => s.id === 'b')).toMatchObject({ status: 'pending', attempts: 1 });
    step = advance(step.view, ctx(now + 150));
    const [b2] = jobs(step.actions);
    expect(b2!.job_id).toBe('t_sched-b-2');

    step = applyResult(step.view, result(b2!, { outcome: 'failed', error: wireError('max_steps_exceeded', 'no') }), ctx());
    const [replan] = jobs(step.actions);
    expect(replan!.kind).toBe('plan');
    expect(replan!.inputs).toMatchObject({ replan: { replace: ['b', 'd'], completed: { a: { output: 'out-a' }, c: { output: 'out-c' } } } });
    expect(step.view.plan!.subtasks.map((s) => [s.id, s.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'failed'],
      ['c', 'succeeded'],
      ['d', 'skipped'],
    ]);

    const replacement = {
      subtasks: [
        { id: 'b_alt', intent: 'B another way', depends_on: ['a'] },
        { id: 'd2', intent: 'D', depends_on: ['b_alt', 'c'] },
      ],
    };
    step = applyResult(step.view, result(replan!, { plan: replacement }), ctx());
    expect(step.actions.map((a) => a.kind)).toEqual(['planned', 'job']);
    expect(jobs(step.actions).map((j) => j.subtask_id)).toEqual(['b_alt']);
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { output: 'out-b-alt' }), ctx());
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { output: 'final' }), ctx());
    expect(step.view).toMatchObject({ status: 'completed', result: { output: 'final' } });
    const done = step.actions.find((a) => a.kind === 'completed');
    expect(done?.kind === 'completed' && done.data.subtasks?.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['a', 'succeeded', 1],
      ['b', 'failed', 2],
      ['c', 'succeeded', 1],
      ['d', 'skipped', 0],
      ['b_alt', 'succeeded', 1],
      ['d2', 'succeeded', 1],
    ]);
  });

  it('two sinks are composed by a compose job', () => {
    const v = planned();
    const twoSinks = {
      subtasks: [
        { id: 'x', intent: 'X', depends_on: [] },
        { id: 'y', intent: 'Y', depends_on: [] },
      ],
    };
    let step = applyResult(v, result({ job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob, { plan: twoSinks }), ctx());
    const [x, y] = jobs(step.actions);
    step = applyResult(step.view, result(x!, { output: 'X!' }), ctx());
    step = applyResult(step.view, result(y!, { output: 'Y!' }), ctx());
    const [compose] = jobs(step.actions);
    expect(compose).toMatchObject({ kind: 'compose', model_role: 'worker', inputs: { subtask_outputs: { x: { output: 'X!' }, y: { output: 'Y!' } } } });
    step = applyResult(step.view, result(compose!, { output: 'X and Y' }), ctx());
    expect(step.view).toMatchObject({ status: 'completed', result: { output: 'X and Y' } });
  });

  it('past its deadline a task fails task_timeout and its jobs are stopped', () => {
    const v = { ...planned(), deadline_at: new Date(Date.now() - 1).toISOString() };
    const step = advance(v, ctx());
    expect(step.view.error?.code).toBe('task_timeout');
    expect(step.actions.map((a) => a.kind)).toEqual(['failed', 'stop_jobs']);
  });
});

describe('one path for every task', () => {
  const single = () =>
    taskView({ task_id: 't_one', status: 'accepted', plan: singlePlan('summarise the release notes'), options: { inputs: { repo: 'hermes' } } });

  it('a single-mode task starts as one agent job with the goal and the raw inputs, after its accepted event', () => {
    const step = begin(single(), ctx())!;
    expect(step.actions.map((a) => a.kind)).toEqual(['accepted', 'job']);
    expect(jobs(step.actions)[0]).toMatchObject({
      job_id: 't_one-main-1',
      subtask_id: 'main',
      goal: 'summarise the release notes',
      kind: 'agent',
      inputs: { repo: 'hermes' },
    });
    expect(step.view.status).toBe('running');
    expect(begin(step.view, ctx())).toBeUndefined();
  });

  it("priorities on the LLM semaphore: a task's opening job has the task's, its retries and later subtasks one more (capped)", () => {
    const now = Date.now();
    const started = begin(single(), ctx(now))!;
    const opening = jobs(started.actions)[0]!;
    expect(opening.priority).toBe(1);
    const failedOnce = applyResult(started.view, result(opening, { outcome: 'failed', error: wireError('llm_unavailable', '503') }), ctx(now));
    const [retry] = jobs(advance(failedOnce.view, ctx(now + 60_000)).actions);
    expect(retry).toMatchObject({ job_id: 't_one-main-2', priority: 2 });

    const high = { ...planned(), options: { priority: 'high' as const } };
    const step = applyResult(
      high,
      result({ job_id: high.plan!.job!.job_id, task_id: high.task_id, subtask_id: 'plan' } as RuntimeJob, { plan: diamond }),
      ctx(),
    );
    expect(jobs(step.actions).map((j) => [j.subtask_id, j.priority])).toEqual([['a', 3]]);
  });

  it('a single-mode task that fails for good ends with the subtask error itself, never re-planned', () => {
    const started = begin(single(), ctx())!;
    const error = wireError('max_steps_exceeded', 'no answer in 10 steps');
    const step = applyResult(started.view, result(jobs(started.actions)[0]!, { outcome: 'failed', error }), ctx());
    expect(step.view).toMatchObject({ status: 'failed', error });
    expect(step.actions.map((a) => a.kind)).toEqual(['failed']);
    expect(jobs(step.actions)).toEqual([]);
  });

  it('a permission refusal in a planned subtask ends the task with that refusal and asks for no re-plan', () => {
    const v = planned();
    const planJob = { job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob;
    let step = applyResult(v, result(planJob, { plan: diamond }), ctx());
    const refusal = wireError('session_forbidden', 'session sess_bob belongs to another user');
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { outcome: 'failed', error: refusal }), ctx());
    expect(jobs(step.actions)).toEqual([]);
    expect(step.view.error).toMatchObject({ code: 'session_forbidden', message: refusal.message, details: { subtask_id: 'a' } });
    expect(step.actions.map((a) => a.kind)).toEqual(['failed']);
  });

  it('cancel ends a running task once, with cancelled and a stop to its jobs; an ended task is not cancelled', () => {
    const started = begin(single(), ctx())!;
    const step = cancel(started.view, 'not needed')!;
    expect(step.view).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', message: 'not needed' } });
    expect(step.actions).toEqual([
      { kind: 'cancelled', userId: 'u_alice', data: { task_id: 't_one', reason: 'not needed' } },
      { kind: 'stop_jobs', reason: 'not needed' },
    ]);
    expect(cancel(step.view, 'again')).toBeUndefined();
    expect(applyResult(step.view, result(jobs(started.actions)[0]!, { output: 'late' }), ctx()).actions).toEqual([]);
  });

  it('a task an older dispatcher stored without a plan takes its single job result as its one-node plan', () => {
    const legacy = taskView({ task_id: 't_old', status: 'running', attempts: 1 });
    const step = applyResult(
      legacy,
      { job_id: 't_old-main', task_id: 't_old', subtask_id: 'main', attempt: 1, outcome: 'succeeded', output: 'done', usage },
      ctx(),
    );
    expect(step.view).toMatchObject({ status: 'completed', result: { output: 'done' } });
    expect(step.actions.map((a) => a.kind)).toEqual(['completed']);
  });

  it('a dependency output over the cap reaches its dependent cut, with a marker', () => {
    const v = planned();
    const planJob = { job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob;
    let step = applyResult(v, result(planJob, { plan: diamond }), ctx());
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { output: 'x'.repeat(MAX_DEPENDENCY_OUTPUT_CHARS + 10) }), ctx());
    const passed = (jobs(step.actions)[0]!.inputs!.dependencies as Record<string, string>).a!;
    expect(passed.startsWith('x'.repeat(MAX_DEPENDENCY_OUTPUT_CHARS))).toBe(true);
    expect(passed).toMatch(/\[… 10 more characters cut\]$/);
  });
});

describe('questions (ask_user)', () => {
  const asking = (now: number) => {
    const started = begin(
      taskView({ task_id: 't_ask', status: 'accepted', plan: singlePlan('deploy'), deadline_at: new Date(now + 5000).toISOString() }),
      ctx(now),
    )!;
    const job = jobs(started.actions)[0]!;
    const question = { call_id: 'q1', question: 'Which region?', usage_total: { input_tokens: 50, output_tokens: 5 } };
    return { job, step: applyResult(started.view, result(job, { outcome: 'input_required', question }), ctx(now)) };
  };

  it('a question makes the task input_required with an event; the answer resumes from the asking job, deadline moved by the wait', () => {
    const now = Date.now();
    const { job, step } = asking(now);
    expect(step.view.status).toBe('input_required');
    expect(step.actions).toEqual([
      expect.objectContaining({ kind: 'input_required', data: expect.objectContaining({ call_id: 'q1', question: 'Which region?' }) }),
    ]);
    // Its deadline passes while it waits: it does not time out.
    expect(advance(step.view, ctx(now + 6000)).view.status).toBe('input_required');

    const answered = answerInput(step.view, { answer: 'eu' }, ctx(now + 6000));
    if ('code' in answered) throw new Error(answered.message);
    expect(answered.view.status).toBe('running');
    expect(Date.parse(answered.view.deadline_at!)).toBe(now + 11_000);
    expect(jobs(answered.actions)[0]).toMatchObject({
      job_id: 't_ask-main-1-input1',
      input_answer: { from_job: job.job_id, call_id: 'q1', answer: 'eu', usage_before: { input_tokens: 50, output_tokens: 5 } },
    });
    // Answered once: a second answer is refused.
    expect(answerInput(answered.view, { answer: 'us' }, ctx(now + 6000))).toMatchObject({ code: 'not_waiting_for_input', retryable: false });
  });

  it('an answer for another call id is refused', () => {
    const { step } = asking(Date.now());
    expect(answerInput(step.view, { answer: 'eu', callId: 'q9' }, ctx())).toMatchObject({ code: 'not_waiting_for_input' });
  });

  it('unanswered past ASK_USER_TIMEOUT_MS: policy fail ends the task input_timeout, policy continue resumes it with the no-answer note', () => {
    const now = Date.now();
    const { step } = asking(now);
    const late = now + settings.inputTimeoutMs + 1;
    const failed = advance(step.view, ctx(late));
    expect(failed.view.status).toBe('failed');
    expect(failed.view.error).toMatchObject({ code: 'input_timeout', details: { call_id: 'q1' } });

    const continuing = advance(step.view, { now: late, settings: { ...settings, inputTimeoutPolicy: 'continue' }, roles: ['user'] });
    expect(continuing.view.status).toBe('running');
    expect(jobs(continuing.actions)[0]!.input_answer).toMatchObject({ call_id: 'q1', answer: NO_ANSWER, timed_out: true });
  });
});
