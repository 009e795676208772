import { describe, expect, it } from 'vitest';
import { wireError, type RuntimeResult, type TaskView } from '@hermes/contracts';
import { advance, applyResult, begin, singlePlan, type Step } from '../src/plan-scheduler.js';
import { dueAt } from '../src/due-times.js';
import { DueHeap } from '../src/due-heap.js';
import { taskView, testPlanSettings } from './support.js';

const TAKEOVER = 2000;
const settings = testPlanSettings;
const T0 = Date.parse('2026-12-03T12:00:00.000Z');
const ctx = (now: number) => ({ now, settings, roles: ['user'] });
/** What a write at `now` stores: the step's view with its updated_at. */
const written = (step: Step, now: number): TaskView => ({ ...step.view, updated_at: new Date(now).toISOString() });
const changes = (v: TaskView, now: number) => {
  const step = advance(v, ctx(now));
  return step.actions.length > 0 || JSON.stringify(step.view) !== JSON.stringify(v);
};

/** A started single-subtask task whose job was sent (marked dispatched), as the coordinator leaves it. */
function sentTask(overrides: Partial<TaskView> = {}): TaskView {
  const v = taskView({
    status: 'accepted',
    plan: singlePlan('g'),
    created_at: new Date(T0).toISOString(),
    updated_at: new Date(T0).toISOString(),
    ...overrides,
  });
  const started = written(begin(v, ctx(T0))!, T0);
  const s = started.plan!.subtasks[0]!;
  return { ...started, plan: { ...started.plan!, subtasks: [{ ...s, dispatched_at: new Date(T0).toISOString() }] } };
}

const result = (v: TaskView, r: Partial<RuntimeResult>): RuntimeResult => ({
  job_id: v.plan!.subtasks[0]!.job_id!,
  task_id: v.task_id,
  subtask_id: 'main',
  attempt: 1,
  outcome: 'succeeded',
  usage: { input_tokens: 0, output_tokens: 0 },
  ...r,
});

describe('due times', () => {
  it('a running task with its job sent is due at its deadline, and advance changes nothing before it and ends it then', () => {
    const v = sentTask({ deadline_at: new Date(T0 + 5000).toISOString() });
    expect(dueAt(v, TAKEOVER)).toBe(T0 + 5000);
    expect(changes(v, T0 + 4999)).toBe(false);
    expect(advance(v, ctx(T0 + 5000)).view).toMatchObject({ status: 'failed', error: { code: 'task_timeout' } });
  });

  it('a task with nothing to wait for by time has no due time', () => {
    expect(dueAt(sentTask(), TAKEOVER)).toBeUndefined();
  });

  it('a job claimed but never marked sent is due a takeover after the last write, when advance publishes it again', () => {
    const v = sentTask();
    const s = v.plan!.subtasks[0]!;
    const unsent: TaskView = { ...v, plan: { ...v.plan!, subtasks: [{ ...s, dispatched_at: undefined }] } };
    delete unsent.plan!.subtasks[0]!.dispatched_at;
    expect(dueAt(unsent, TAKEOVER)).toBe(T0 + TAKEOVER);
    expect(changes(unsent, T0 + TAKEOVER - 1)).toBe(false);
    expect(advance(unsent, ctx(T0 + TAKEOVER)).actions.map((a) => a.kind)).toEqual(['job']);
  });

  it('a retryable failure is due at its back-off, when advance sends the retry', () => {
    const v = sentTask();
    const failed = written(applyResult(v, result(v, { outcome: 'failed', error: wireError('llm_unavailable', 'down') }), ctx(T0 + 10)), T0 + 10);
    const retryAt = Date.parse(failed.plan!.subtasks[0]!.retry_at!);
    expect(dueAt(failed, TAKEOVER)).toBe(retryAt);
    expect(changes(failed, retryAt - 1)).toBe(false);
    expect(advance(failed, ctx(retryAt)).actions.map((a) => a.kind)).toEqual(['job']);
  });

  it('a question is due at its answer deadline and the task deadline does not run meanwhile', () => {
    const v = sentTask({ deadline_at: new Date(T0 + 1000).toISOString() });
    const asked = written(applyResult(v, result(v, { outcome: 'input_required', question: { call_id: 'c1', question: 'which?' } }), ctx(T0 + 10)), T0 + 10);
    expect(asked.status).toBe('input_required');
    expect(dueAt(asked, TAKEOVER)).toBe(T0 + 10 + settings.inputTimeoutMs);
    expect(changes(asked, T0 + 10 + settings.inputTimeoutMs - 1)).toBe(false);
    expect(advance(asked, ctx(T0 + 10 + settings.inputTimeoutMs)).view.status).toBe('failed');
  });

  it('an ended task is due a takeover after its end was written (another replica announces it if its writer died)', () => {
    const v = sentTask();
    const done = written(applyResult(v, result(v, { output: 'ok' }), ctx(T0 + 10)), T0 + 10);
    expect(done.status).toBe('completed');
    expect(dueAt(done, TAKEOVER)).toBe(T0 + 10 + TAKEOVER);
  });
});

describe('due heap', () => {
  it('hands out due keys earliest first, once each, and a reschedule replaces the earlier time', () => {
    const heap = new DueHeap();
    const times = Array.from({ length: 200 }, (_, i) => (i * 7919) % 1000);
    times.forEach((t, i) => heap.set(`k${i}`, t));
    heap.set('k0', 5000);
    heap.delete('k1');
    const due = heap.takeDue(999);
    expect(due).toHaveLength(198);
    expect(new Set(due).size).toBe(198);
    expect(due.map((k) => times[Number(k.slice(1))])).toEqual([...due.map((k) => times[Number(k.slice(1))]!)].sort((a, b) => a - b));
    expect(heap.peek()).toBe(5000);
    expect(heap.takeDue(5000)).toEqual(['k0']);
    expect(heap.size).toBe(0);
  });
});
