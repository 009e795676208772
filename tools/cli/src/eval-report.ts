import type { EvalResults } from '@hermes/contracts';

/** The results as a markdown table: a row per case (pass, tokens, latency, cost, each grader), then the pass rate and each grader's. */
export function resultsMarkdown(r: EvalResults): string {
  const graderNames = [...new Set(r.cases.flatMap((c) => c.graders.map((g) => g.grader)))];
  const head = ['case', 'pass', 'status', 'steps', 'tokens in/out', 'latency ms', 'cost', ...graderNames];
  const rows = r.cases.map((c) => [
    c.id,
    c.passed ? '✅' : '❌',
    c.status + (c.error_code ? ` (${c.error_code})` : ''),
    String(c.steps),
    `${c.tokens.input}/${c.tokens.output}`,
    String(Math.round(c.latency_ms)),
    c.cost === undefined ? '-' : c.cost.toFixed(4),
    ...graderNames.map((n) => {
      const of = c.graders.filter((g) => g.grader === n);
      return of.length === 0 ? '-' : of.every((g) => g.passed) ? 'pass' : 'FAIL';
    }),
  ]);
  const byGrader = graderNames.map((n) => {
    const all = r.cases.flatMap((c) => c.graders.filter((g) => g.grader === n));
    return `${n} ${all.filter((g) => g.passed).length}/${all.length}`;
  });
  const failures = r.cases.flatMap((c) => c.graders.filter((g) => !g.passed).map((g) => `- **${c.id}** ${g.grader}: ${g.detail.replace(/\n/g, ' ')}`));
  return [
    `# ${r.suite}: ${r.cases.filter((c) => c.passed).length}/${r.cases.length} passed (${(r.pass_rate * 100).toFixed(0)} %)`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map((x) => x.replace(/\|/g, '\\|')).join(' | ')} |`),
    '',
    `By grader: ${byGrader.join(', ')}`,
    ...(failures.length ? ['', '## Failures', '', ...failures] : []),
    '',
  ].join('\n');
}
