import type { EvalResults } from '@hermes/contracts';

/** What changed from one result file to the next. */
export interface EvalComparison {
  pass_rate_before: number;
  pass_rate_after: number;
  /** Cases that passed before and fail now, with the graders that fail. */
  regressions: { id: string; failing: string[] }[];
  fixed: string[];
  /** Cases in only one of the files. */
  added: string[];
  removed: string[];
}

/** Compares two runs of a suite case by case. */
export function compareResults(before: EvalResults, after: EvalResults): EvalComparison {
  const old = new Map(before.cases.map((c) => [c.id, c]));
  const now = new Map(after.cases.map((c) => [c.id, c]));
  const regressions: EvalComparison['regressions'] = [];
  const fixed: string[] = [];
  for (const [id, c] of now) {
    const was = old.get(id);
    if (!was) continue;
    if (was.passed && !c.passed) regressions.push({ id, failing: c.graders.filter((g) => !g.passed).map((g) => `${g.grader}: ${g.detail}`) });
    if (!was.passed && c.passed) fixed.push(id);
  }
  return {
    pass_rate_before: before.pass_rate,
    pass_rate_after: after.pass_rate,
    regressions,
    fixed,
    added: [...now.keys()].filter((id) => !old.has(id)),
    removed: [...old.keys()].filter((id) => !now.has(id)),
  };
}

/** The comparison for the terminal. */
export function formatComparison(c: EvalComparison): string {
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  const delta = (c.pass_rate_after - c.pass_rate_before) * 100;
  const lines = [`pass rate ${pct(c.pass_rate_before)} → ${pct(c.pass_rate_after)} (${delta >= 0 ? '+' : ''}${delta.toFixed(0)} points)`];
  for (const r of c.regressions) lines.push(`REGRESSION ${r.id}: passed before, fails now: ${r.failing.join('; ')}`);
  for (const id of c.fixed) lines.push(`fixed ${id}: failed before, passes now`);
  for (const id of c.added) lines.push(`new case ${id}`);
  for (const id of c.removed) lines.push(`case ${id} no longer run`);
  if (c.regressions.length === 0) lines.push('no regressions');
  return `${lines.join('\n')}\n`;
}
