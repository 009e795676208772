import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { EvalResults, EvalSuite, validate } from '@hermes/contracts';
import { CliError, EXIT, TEAM_OPTION, UsageError, stringOption, teamOption, writeLine, type Command } from './command.js';
import { compareResults, formatComparison } from './eval-compare.js';
import { resultsMarkdown } from './eval-report.js';
import { runSuite } from './eval-runner.js';

/** `hermes eval <suite.yaml>`: run a suite's cases through Hermes and write results.json and results.md. */
export const evalCommand: Command = {
  path: ['eval'],
  summary: 'run an eval suite (YAML) and write results.json and a markdown table',
  help: 'Each case is a recorded task answered by its scripted model, a recording or the live pool, graded by its graders.\nExit 0 when every case passed, 1 otherwise. See docs/evals.md.',
  args: '<suite.yaml>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    out: { type: 'string', valueName: 'dir', description: 'where results.json and results.md go (default: eval-results)' },
    concurrency: { type: 'string', valueName: 'n', description: 'cases run at once (default 2); their LLM calls queue in the global semaphore' },
    case: { type: 'string', valueName: 'ids', description: 'run only these cases (comma-separated)' },
    'timeout-ms': { type: 'string', valueName: 'ms', description: 'how long one task of a case may take (default 120000)' },
    ...TEAM_OPTION,
  },
  async execute({ values, positionals }, ctx) {
    const suite = await loadSuite(positionals[0]!);
    const concurrency = positiveInt('--concurrency', stringOption(values, 'concurrency') ?? '2');
    const timeoutMs = positiveInt('--timeout-ms', stringOption(values, 'timeout-ms') ?? '120000');
    const only = stringOption(values, 'case')
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const results = await runSuite({
      bus: await ctx.bus(),
      suite,
      team: teamOption(values, ctx.env),
      concurrency,
      timeoutMs,
      ...(only ? { only } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const out = stringOption(values, 'out') ?? 'eval-results';
    await mkdir(out, { recursive: true });
    const markdown = resultsMarkdown(results);
    await writeFile(join(out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    await writeFile(join(out, 'results.md'), markdown);
    ctx.stdout.write(markdown);
    writeLine(ctx.stderr, `wrote ${join(out, 'results.json')} and ${join(out, 'results.md')}`);
    return results.cases.every((c) => c.passed) ? EXIT.ok : EXIT.failed;
  },
};

/** `hermes eval compare a.json b.json`: per-case regressions and the change in pass rate. */
export const evalCompareCommand: Command = {
  path: ['eval', 'compare'],
  summary: 'compare two eval results: regressions, fixes and the change in pass rate',
  help: 'Exit 1 when a case that passed in the first file fails in the second.',
  args: '<before.json> <after.json>',
  minArgs: 2,
  maxArgs: 2,
  options: { json: { type: 'boolean', description: 'print the comparison as JSON' } },
  async execute({ values, positionals }, ctx) {
    const [before, after] = await Promise.all([loadResults(positionals[0]!), loadResults(positionals[1]!)]);
    const c = compareResults(before, after);
    ctx.stdout.write(values.json === true ? `${JSON.stringify(c, null, 2)}\n` : formatComparison(c));
    return c.regressions.length > 0 ? EXIT.failed : EXIT.ok;
  },
};

export const EVAL_COMMANDS: readonly Command[] = [evalCommand, evalCompareCommand];

/** A suite file, parsed and checked against its schema: every problem named with its path. */
export async function loadSuite(path: string): Promise<EvalSuite> {
  const parsed = parse(await readText(path)) as unknown;
  const checked = validate(EvalSuite, parsed);
  if (!checked.ok) throw new UsageError(`${path} is not a valid suite: ${checked.issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`);
  const ids = checked.value.cases.map((c) => c.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw new UsageError(`${path}: case id ${dup} is used twice`);
  return checked.value;
}

async function loadResults(path: string): Promise<EvalResults> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readText(path));
  } catch (err) {
    throw new UsageError(`${path} is not JSON: ${(err as Error).message}`);
  }
  const checked = validate(EvalResults, parsed);
  if (!checked.ok) throw new UsageError(`${path} is not an eval results file: ${checked.issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`);
  return checked.value;
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`, EXIT.failed, { cause: err });
  }
}

function positiveInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer (got "${value}")`);
  return n;
}
