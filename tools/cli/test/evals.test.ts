import { fileURLToPath } from 'node:url';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EvalCaseResult, EvalResults } from '@hermes/contracts';
import { UsageError, argsMatch, compareResults, formatComparison, grade, loadSuite, resultsMarkdown, summarize } from '../src/index.js';

const standard = fileURLToPath(new URL('../../../evals/standard.yaml', import.meta.url));

const run = (output: string | undefined, status = 'completed') => ({ taskId: 't_1', status, ...(output !== undefined ? { output } : {}), latencyMs: 10 });
const summary = (calls: { name: string; arguments: string; ok: boolean }[], steps = 2) => ({
  ...summarize([]),
  calls: calls.map((c, i) => ({ subtask_id: 'main', step: i + 1, index: 0, result: null, ...c })),
  steps,
  tokens: { input: 100, output: 20 },
});

describe('eval suites', () => {
  it('the standard suite file is valid and has the eight standard cases', async () => {
    const suite = await loadSuite(standard);
    expect(suite.cases.map((c) => c.id)).toEqual([
      'tool-selection',
      'malformed-argument-self-correction',
      'multi-step-dependencies',
      'loop-avoidance',
      'replan-after-failing-tool',
      'ask-for-missing-information',
      'memory-recall-across-sessions',
      'refuse-forbidden-tool',
    ]);
  });

  it('a suite with an unknown grader is refused naming where', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'evals-unit-'));
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, 'suite: bad\ncases:\n  - id: one\n    goal: g\n    graders: [{ type: vibes }]\n');
    await expect(loadSuite(path)).rejects.toThrow(UsageError);
    await expect(loadSuite(path)).rejects.toThrow(/\/cases\/0\/graders\/0/);
  });
});

describe('graders', () => {
  it('argument matchers: equals, contains, regex, present; malformed arguments match nothing', () => {
    const raw = JSON.stringify({ city: 'Paris', days: 10 });
    expect(argsMatch(raw, { days: { equals: 10 }, city: { contains: 'par' } })).toBe(true);
    expect(argsMatch(raw, { city: { regex: '^P.r' }, zip: { present: false } })).toBe(true);
    expect(argsMatch(raw, { days: { equals: '10' } })).toBe(false);
    expect(argsMatch('{"days": ten}', { days: { present: true } })).toBe(false);
  });

  it('expected tool calls in order fail when they come the other way round, pass in any order', () => {
    const r = {
      run: run('ok'),
      summary: summary([
        { name: 'b', arguments: '{}', ok: true },
        { name: 'a', arguments: '{}', ok: true },
      ]),
    };
    const expectAB = { type: 'tool_calls' as const, expect: [{ name: 'a' }, { name: 'b' }] };
    expect(grade(expectAB, r).passed).toBe(true);
    const ordered = grade({ ...expectAB, ordered: true }, r);
    expect(ordered.passed).toBe(false);
    expect(ordered.detail).toContain('no later call of b');
  });

  it('a forbidden tool that ran fails; one the toolbus refused does not', () => {
    const refused = { run: run('no'), summary: summary([{ name: 'http_get', arguments: '{}', ok: false }]) };
    expect(grade({ type: 'tool_calls', expect: [], forbid: ['http_get'] }, refused).passed).toBe(true);
    const ran = { run: run('yes'), summary: summary([{ name: 'http_get', arguments: '{}', ok: true }]) };
    expect(grade({ type: 'tool_calls', expect: [], forbid: ['http_get'] }, ran)).toMatchObject({
      passed: false,
      detail: expect.stringContaining('forbidden tool http_get'),
    });
  });

  it('final answer: contains, not_contains, regex and JSON schema', () => {
    const r = (out: string) => ({ run: run(out), summary: summary([]) });
    expect(grade({ type: 'final_answer', contains: ['teal'], regex: 'colour' }, r('Your favourite colour is Teal.')).passed).toBe(true);
    expect(grade({ type: 'final_answer', not_contains: ['example'] }, r('Example Domain')).passed).toBe(false);
    const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } };
    expect(grade({ type: 'final_answer', json_schema: schema }, r('{"n": 3}')).passed).toBe(true);
    expect(grade({ type: 'final_answer', json_schema: schema }, r('{"n": "3"}'))).toMatchObject({ passed: false, detail: expect.stringContaining('/n') });
    expect(grade({ type: 'final_answer', json_schema: schema }, r('three'))).toMatchObject({ passed: false, detail: expect.stringContaining('not JSON') });
    expect(grade({ type: 'final_answer', contains: ['x'] }, { run: run(undefined, 'failed'), summary: summary([]) }).passed).toBe(false);
  });

  it('limits fail past max steps or max tokens', () => {
    const r = { run: run('ok'), summary: summary([], 5) };
    expect(grade({ type: 'limits', max_steps: 4 }, r)).toMatchObject({ passed: false, detail: '5 steps > 4' });
    expect(grade({ type: 'limits', max_tokens: 119 }, r).passed).toBe(false);
    expect(grade({ type: 'limits', max_steps: 5, max_tokens: 120 }, r).passed).toBe(true);
  });
});

const caseResult = (id: string, passed: boolean): EvalCaseResult => ({
  id,
  task_id: 't_1',
  passed,
  status: passed ? 'completed' : 'failed',
  tool_calls: [],
  steps: 2,
  tokens: { input: 10, output: 5 },
  latency_ms: 100,
  graders: [{ grader: 'final_answer', passed, detail: passed ? 'ok' : 'answer does not contain "x"' }],
});
const results = (cases: EvalCaseResult[]): EvalResults => ({
  version: 1,
  suite: 's',
  started_at: '2026-12-02T15:00:00Z',
  pass_rate: cases.filter((c) => c.passed).length / cases.length,
  cases,
});

describe('eval compare', () => {
  it('flags a case that passed before and fails now, and the change in pass rate', () => {
    const c = compareResults(
      results([caseResult('a', true), caseResult('b', false), caseResult('c', true)]),
      results([caseResult('a', false), caseResult('b', true), caseResult('d', true)]),
    );
    expect(c.regressions).toEqual([{ id: 'a', failing: ['final_answer: answer does not contain "x"'] }]);
    expect(c).toMatchObject({ fixed: ['b'], added: ['d'], removed: ['c'] });
    const text = formatComparison(c);
    expect(text).toContain('pass rate 67 % → 67 % (+0 points)');
    expect(text).toContain('REGRESSION a: passed before, fails now');
  });

  it('no regression when nothing that passed fails', () => {
    const c = compareResults(results([caseResult('a', false)]), results([caseResult('a', true)]));
    expect(c.regressions).toEqual([]);
    expect(formatComparison(c)).toContain('no regressions');
  });

  it('the markdown table has a row per case and the pass rate by grader', () => {
    const md = resultsMarkdown(results([caseResult('a', true), caseResult('b', false)]));
    expect(md).toContain('# s: 1/2 passed (50 %)');
    expect(md).toContain('| a | ✅ | completed | 2 | 10/5 | 100 | - | pass |');
    expect(md).toContain('By grader: final_answer 1/2');
    expect(md).toContain('- **b** final_answer: answer does not contain "x"');
  });
});
