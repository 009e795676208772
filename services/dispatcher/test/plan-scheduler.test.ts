import { describe, expect, it } from 'vitest';
import { wireError, type RuntimeJob, type RuntimeResult, type TaskView } from '@hermes/contracts';
import { advance, applyResult, initialPlan, type Action, type PlanSettings } from '../src/plan-scheduler.js';
import { taskView } from './support.js';

const settings: PlanSettings = { maxSubtasks: 12, maxRetries: 2, maxReplans: 1, retryBaseMs: 100, subtaskTimeoutMs: 60_000, redispatchAfterMs: 2000 };
const ctx = (now = Date.now()) => ({ now, settings, roles: ['user'] });
const jobs = (actions: Action[]) => actions.flatMap((a) => (a.kind === 'job' ? [a.job] : []));
const usage = { input_tokens: 1, output_tokens: 1 };

function planned(): TaskView {
  return taskView({ task_id: 't_sched', status: 'running', plan: initialPlan('t_sched', Date.now()) });
}

function result(job: RuntimeJob, r: Partial<RuntimeResult>): RuntimeResult {
  return { job_id: job.job_id, task_id: job.task_id, subtask_id: job.subtask_id, attempt: 1, outcome: 'succeeded', usage, ...r };
}

const diamond = { subtasks: [{ id: 'a', intent: 'A', depends_on: [] }, { id: 'b', intent: 'B', depends_on: ['a'] }, { id: 'c', intent: 'C', depends_on: ['a'] }, { id: 'd', intent: 'D', depends_on: ['b', 'c'] }] };

describe('plan scheduler', () => {
  it('runs a diamond: A, then B and C together with A\'s output, then D with both, and D answers', () => {
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
    const cyclic = { subtasks: [{ id: 'a', intent: 'A', depends_on: ['b'] }, { id: 'b', intent: 'B', depends_on: ['a'] }] };
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
    expect(step.view.plan!.subtasks.map((s) => [s.id, s.status])).toEqual([['a', 'succeeded'], ['b', 'failed'], ['c', 'succeeded'], ['d', 'skipped']]);

    const replacement = { subtasks: [{ id: 'b_alt', intent: 'B another way', depends_on: ['a'] }, { id: 'd2', intent: 'D', depends_on: ['b_alt', 'c'] }] };
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
    const twoSinks = { subtasks: [{ id: 'x', intent: 'X', depends_on: [] }, { id: 'y', intent: 'Y', depends_on: [] }] };
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
