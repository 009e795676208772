import { describe, expect, it } from 'vitest';
import type { RuntimeJob, RuntimeResult, TaskView } from '@hermes/contracts';
import { applyResult, initialPlan, type Action } from '../src/plan-scheduler.js';
import { checkVerdict } from '../src/plan-review.js';
import { taskView, testPlanSettings } from './support.js';

const settings = testPlanSettings;
const ctx = () => ({ now: Date.now(), settings, roles: ['user'] });
const jobs = (actions: Action[]) => actions.flatMap((a) => (a.kind === 'job' ? [a.job] : []));
const kinds = (actions: Action[]) => actions.map((a) => (a.kind === 'job' ? `job:${a.job.subtask_id}` : a.kind));
const usage = { input_tokens: 1, output_tokens: 1 };
const result = (job: RuntimeJob, r: Partial<RuntimeResult>): RuntimeResult => ({
  job_id: job.job_id,
  task_id: job.task_id,
  subtask_id: job.subtask_id,
  attempt: 1,
  outcome: 'succeeded',
  usage,
  ...r,
});

describe('review verdict parser', () => {
  const ids = ['fetch', 'chart'];
  it('accepts an accept verdict with an answer and a revise verdict naming known subtasks', () => {
    expect(checkVerdict({ verdict: 'accept', answer: 'merged' }, ids)).toEqual({ ok: true, verdict: { verdict: 'accept', answer: 'merged' } });
    const revise = { verdict: 'revise', subtasks: [{ id: 'chart', notes: 'label the axes' }] };
    expect(checkVerdict(revise, ids)).toEqual({ ok: true, verdict: revise });
  });
  it('refuses an answer without JSON, an unknown verdict, an accept without answer and extra fields', () => {
    for (const bad of [undefined, { verdict: 'maybe' }, { verdict: 'accept' }, { verdict: 'accept', answer: 'x', extra: 1 }, 'accept']) {
      const checked = checkVerdict(bad, ids);
      expect(checked.ok, JSON.stringify(bad)).toBe(false);
      if (!checked.ok) expect(checked.errors[0]).toMatch(/verdict|JSON/);
    }
  });
  it('refuses a revise verdict naming no subtask, an unknown subtask, or one twice', () => {
    expect(checkVerdict({ verdict: 'revise', subtasks: [] }, ids).ok).toBe(false);
    expect(checkVerdict({ verdict: 'revise', subtasks: [{ id: 'ghost', notes: 'n' }] }, ids)).toEqual({
      ok: false,
      errors: ['subtask "ghost" is not a subtask of this task (its subtasks: fetch, chart)'],
    });
    const twice = checkVerdict(
      {
        verdict: 'revise',
        subtasks: [
          { id: 'chart', notes: 'a' },
          { id: 'chart', notes: 'b' },
        ],
      },
      ids,
    );
    expect(twice).toEqual({ ok: false, errors: ['subtask "chart" is named more than once'] });
  });
});

/** A task that asked for review, planned into two independent subtasks that both succeeded: the review job is out. */
function reviewing(o: { reviewRounds?: number } = {}) {
  let v: TaskView = taskView({
    task_id: 't_rev',
    status: 'running',
    plan: initialPlan('t_rev', Date.now()),
    options: { review: true, ...(o.reviewRounds !== undefined ? { review_rounds: o.reviewRounds } : {}) },
  });
  const planJob = { job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob;
  let step = applyResult(
    v,
    result(planJob, {
      plan: {
        subtasks: [
          { id: 'a', intent: 'A', depends_on: [] },
          { id: 'b', intent: 'B', depends_on: [] },
        ],
      },
    }),
    ctx(),
  );
  const [a, b] = jobs(step.actions);
  v = applyResult(step.view, result(a!, { output: 'out-a' }), ctx()).view;
  step = applyResult(v, result(b!, { output: 'out-b' }), ctx());
  return step;
}

describe('review step', () => {
  it('starts once every subtask succeeded: review_started, then a reviewer job with every output', () => {
    const step = reviewing();
    expect(kinds(step.actions)).toEqual(['review_started', 'job:review1']);
    const [job] = jobs(step.actions);
    expect(job).toMatchObject({ kind: 'review', model_role: 'reviewer', job_id: 't_rev-review1-1' });
    expect(job!.inputs).toMatchObject({ round: 1, may_revise: true, subtask_outputs: { a: { output: 'out-a' }, b: { output: 'out-b' } } });
    expect(step.view.plan).toMatchObject({ stage: 'reviewing', review: { rounds: 1, round: 1 } });
  });

  it('revise runs only the named subtask again with the notes and its previous output; then review 2 accepts', () => {
    let step = reviewing();
    const verdict = { verdict: 'revise', subtasks: [{ id: 'b', notes: 'cite the source' }] };
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { verdict }), ctx());
    expect(kinds(step.actions)).toEqual(['review_verdict', 'job:b']);
    const [again] = jobs(step.actions);
    expect(again).toMatchObject({ job_id: 't_rev-b-2', inputs: { review: { notes: 'cite the source', previous_output: 'out-b' } } });
    expect(step.view.plan!.subtasks.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['a', 'succeeded', 1],
      ['b', 'running', 2],
    ]);
    step = applyResult(step.view, result(again!, { output: 'out-b2' }), ctx());
    expect(kinds(step.actions)).toEqual(['review_started', 'job:review2']);
    expect(jobs(step.actions)[0]!.inputs).toMatchObject({ round: 2, may_revise: false, subtask_outputs: { b: { output: 'out-b2' } } });
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { verdict: { verdict: 'accept', answer: 'merged' } }), ctx());
    expect(kinds(step.actions)).toEqual(['review_verdict', 'completed']);
    expect(step.view).toMatchObject({ status: 'completed', result: { output: 'merged', review: { accepted: true, rounds: 2 } } });
  });

  it('a revise verdict with no round left ends the review unaccepted, and the last outputs are composed', () => {
    let step = reviewing({ reviewRounds: 0 });
    const notes = [{ id: 'a', notes: 'too short' }];
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { verdict: { verdict: 'revise', subtasks: notes } }), ctx());
    expect(kinds(step.actions)).toEqual(['review_verdict', 'job:compose']);
    expect(step.actions[0]).toMatchObject({ data: { exhausted: true, round: 1 } });
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { output: 'composed' }), ctx());
    expect(step.view).toMatchObject({ status: 'completed', result: { output: 'composed', review: { accepted: false, rounds: 1, notes } } });
  });

  it('a malformed verdict goes back once with the errors, then the task fails review_invalid; a duplicate result changes nothing', () => {
    let step = reviewing();
    const first = jobs(step.actions)[0]!;
    step = applyResult(step.view, result(first, { verdict: { verdict: 'revise', subtasks: [{ id: 'ghost', notes: 'n' }] } }), ctx());
    const [retry] = jobs(step.actions);
    expect(retry).toMatchObject({ job_id: 't_rev-review1-2', inputs: { invalid_verdict_errors: [expect.stringContaining('ghost')] } });
    expect(applyResult(step.view, result(first, { verdict: { verdict: 'accept', answer: 'late' } }), ctx()).actions).toEqual([]);
    step = applyResult(step.view, result(retry!, { output: 'no json here' }), ctx());
    expect(step.view).toMatchObject({ status: 'failed', error: { code: 'review_invalid', details: { round: 1 } } });
    expect(kinds(step.actions)).toEqual(['failed']);
  });

  it("a planner's plan may end in a review with REVIEW_ROUNDS", () => {
    const v = taskView({ task_id: 't_prev', status: 'running', plan: initialPlan('t_prev', Date.now()) });
    const planJob = { job_id: v.plan!.job!.job_id, task_id: v.task_id, subtask_id: 'plan' } as RuntimeJob;
    let step = applyResult(v, result(planJob, { plan: { subtasks: [{ id: 'only', intent: 'X', depends_on: [] }], review: true } }), ctx());
    expect(step.view.plan!.review).toEqual({ rounds: 1, round: 0 });
    step = applyResult(step.view, result(jobs(step.actions)[0]!, { output: 'x' }), ctx());
    expect(kinds(step.actions)).toEqual(['review_started', 'job:review1']);
  });
});
