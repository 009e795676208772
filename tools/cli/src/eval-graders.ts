import { Type } from '@sinclair/typebox';
import { validate, type ArgumentMatcher, type EvalGrader, type GraderResult } from '@hermes/contracts';
import type { RunSummary } from './recording-summary.js';
import type { TaskRun } from './task-runs.js';

/** What a grader sees of a case's run. */
export interface GradedRun {
  run: TaskRun;
  summary: RunSummary;
}

/** The grader kinds that need no model (llm_judge runs a task: see eval-runner.ts). */
export type LocalGrader = Exclude<EvalGrader, { type: 'llm_judge' }>;

/** Grades one run by one grader. */
export function grade(g: LocalGrader, r: GradedRun): GraderResult {
  switch (g.type) {
    case 'tool_calls':
      return gradeToolCalls(g, r);
    case 'final_answer':
      return gradeAnswer(g, r);
    case 'limits': {
      const tokens = r.summary.tokens.input + r.summary.tokens.output;
      const over = [
        g.max_steps !== undefined && r.summary.steps > g.max_steps ? `${r.summary.steps} steps > ${g.max_steps}` : '',
        g.max_tokens !== undefined && tokens > g.max_tokens ? `${tokens} tokens > ${g.max_tokens}` : '',
      ].filter(Boolean);
      return { grader: 'limits', passed: over.length === 0, detail: over.join('; ') || `${r.summary.steps} steps, ${tokens} tokens` };
    }
    case 'outcome':
      return { grader: 'outcome', passed: r.run.status === g.status, detail: `task ${r.run.status}${r.run.errorCode ? ` (${r.run.errorCode})` : ''}` };
  }
}

function gradeToolCalls(g: Extract<EvalGrader, { type: 'tool_calls' }>, r: GradedRun): GraderResult {
  const calls = r.summary.calls;
  const problems: string[] = [];
  let from = 0;
  for (const want of g.expect) {
    const pool = g.ordered ? calls.slice(from) : calls;
    const i = pool.findIndex((c) => c.name === want.name && (want.ok === undefined || c.ok === want.ok) && argsMatch(c.arguments, want.arguments ?? {}));
    if (i === -1)
      problems.push(
        `no ${g.ordered ? 'later ' : ''}call of ${want.name}${want.arguments ? ` with ${JSON.stringify(want.arguments)}` : ''}${want.ok === undefined ? '' : want.ok ? ' that worked' : ' that failed'}`,
      );
    else if (g.ordered) from += i + 1;
  }
  for (const name of g.forbid ?? []) if (calls.some((c) => c.name === name && c.ok)) problems.push(`forbidden tool ${name} was called`);
  const seen = calls.map((c) => `${c.name}(${c.arguments})${c.ok ? '' : '!'}`).join(', ') || 'none';
  return { grader: 'tool_calls', passed: problems.length === 0, detail: problems.length ? `${problems.join('; ')}; calls: ${seen}` : `calls: ${seen}` };
}

function gradeAnswer(g: Extract<EvalGrader, { type: 'final_answer' }>, r: GradedRun): GraderResult {
  const answer = r.run.output ?? r.summary.finalAnswer;
  if (answer === undefined) return { grader: 'final_answer', passed: false, detail: `no final answer (task ${r.run.status})` };
  const problems: string[] = [];
  const lower = answer.toLowerCase();
  for (const s of g.contains ?? []) if (!lower.includes(s.toLowerCase())) problems.push(`does not contain "${s}"`);
  for (const s of g.not_contains ?? []) if (lower.includes(s.toLowerCase())) problems.push(`contains "${s}"`);
  if (g.regex !== undefined && !new RegExp(g.regex, 'i').test(answer)) problems.push(`does not match /${g.regex}/`);
  if (g.json_schema !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer);
    } catch {
      problems.push('is not JSON');
    }
    if (parsed !== undefined) {
      const checked = validate(Type.Unsafe(g.json_schema), parsed);
      if (!checked.ok) problems.push(`fails its JSON schema: ${checked.issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`);
    }
  }
  return {
    grader: 'final_answer',
    passed: problems.length === 0,
    detail: problems.length ? `answer ${problems.join(', ')}: ${JSON.stringify(cut(answer))}` : JSON.stringify(cut(answer)),
  };
}

/** Whether a call's raw argument text matches every matcher (a malformed text matches none). */
export function argsMatch(raw: string, matchers: Record<string, ArgumentMatcher>): boolean {
  const names = Object.keys(matchers);
  if (names.length === 0) return true;
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return false;
  }
  if (typeof args !== 'object' || args === null) return false;
  return names.every((name) => {
    const m = matchers[name]!;
    const v = args[name];
    if ('present' in m) return (v !== undefined) === m.present;
    if (v === undefined) return false;
    if ('equals' in m) return JSON.stringify(v) === JSON.stringify(m.equals);
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    if ('contains' in m) return text.toLowerCase().includes(m.contains.toLowerCase());
    return new RegExp(m.regex, 'i').test(text);
  });
}

const cut = (s: string, max = 160) => (s.length > max ? `${s.slice(0, max)}…` : s);
