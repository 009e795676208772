import { describe, expect, it } from 'vitest';
import type { SubtaskState } from '@hermes/contracts';
import { checkPlan } from '../src/plan-validation.js';

const rules = { maxSubtasks: 12 };
const node = (id: string, depends_on: string[] = [], extra: object = {}) => ({ id, intent: `do ${id}`, depends_on, ...extra });
const errorsOf = (candidate: unknown, r: Parameters<typeof checkPlan>[1] = rules) => {
  const checked = checkPlan(candidate, r);
  return checked.ok ? [] : checked.errors;
};

describe('checkPlan', () => {
  it('accepts a diamond DAG', () => {
    const checked = checkPlan({ subtasks: [node('a'), node('b', ['a']), node('c', ['a']), node('d', ['b', 'c'])] }, rules);
    expect(checked.ok).toBe(true);
  });

  it('rejects a cycle and names it', () => {
    expect(errorsOf({ subtasks: [node('a', ['c']), node('b', ['a']), node('c', ['b'])] })).toEqual([expect.stringMatching(/cycle: a -> c -> b -> a/)]);
  });

  it('rejects a subtask that depends on itself', () => {
    expect(errorsOf({ subtasks: [node('a', ['a'])] })).toEqual([expect.stringMatching(/"a" depends on itself/)]);
  });

  it('rejects an unknown dependency', () => {
    expect(errorsOf({ subtasks: [node('a'), node('b', ['zzz'])] })).toEqual(['subtask "b" depends on unknown subtask "zzz"']);
  });

  it('rejects a duplicate id', () => {
    expect(errorsOf({ subtasks: [node('a'), node('a')] })).toEqual(['subtask id "a" is used more than once']);
  });

  it('rejects a plan over the size limit', () => {
    const subtasks = Array.from({ length: 5 }, (_, i) => node(`s${i}`));
    expect(errorsOf({ subtasks }, { maxSubtasks: 4 })).toEqual(['the plan has 5 subtasks; at most 4 are allowed']);
  });

  it('rejects tools outside the task allow-list, and accepts any tool without one', () => {
    const plan = { subtasks: [node('a', [], { tools: ['web_search', 'delete_everything'] })] };
    expect(errorsOf(plan, { maxSubtasks: 12, allowedTools: ['web_search'] })).toEqual([
      'subtask "a" suggests tools outside the task\'s allow-list: delete_everything',
    ]);
    expect(errorsOf(plan)).toEqual([]);
  });

  it('rejects what does not match the schema, and an answer with no JSON at all', () => {
    expect(errorsOf({ subtasks: [{ id: 'a' }] }).join('\n')).toMatch(/depends_on|intent/);
    expect(errorsOf({ steps: [] })).not.toEqual([]);
    expect(errorsOf(undefined)).toEqual([expect.stringMatching(/no JSON object/)]);
    expect(errorsOf({ subtasks: [] })).not.toEqual([]);
  });

  it('re-plans may depend on succeeded subtasks but not reuse ids or depend on failed ones', () => {
    const existing: SubtaskState[] = [
      { id: 'a', intent: 'x', depends_on: [], status: 'succeeded', attempts: 1, generation: 0, output: 'A' },
      { id: 'b', intent: 'y', depends_on: ['a'], status: 'failed', attempts: 3, generation: 0 },
    ];
    expect(errorsOf({ subtasks: [node('b2', ['a'])] }, { maxSubtasks: 12, existing })).toEqual([]);
    expect(errorsOf({ subtasks: [node('a', [])] }, { maxSubtasks: 12, existing })).toEqual([expect.stringMatching(/"a" is already taken/)]);
    expect(errorsOf({ subtasks: [node('b2', ['b'])] }, { maxSubtasks: 12, existing })).toEqual([
      expect.stringMatching(/depends on "b", which did not succeed/),
    ]);
  });
});
