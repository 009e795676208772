import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupAll } from '@hermes/testkit';
import { benchOptions, semaphoreSettings } from './bench-options.js';
import { runContextBudgetBench } from './context-budget-bench.js';
import { contextBudgetOptions, contextBudgetSettings } from './context-budget-options.js';
import { contextBudgetVerdict, renderContextBudgetMarkdown } from './context-budget-report.js';
import { selectBenchmarks } from './bench-selection.js';
import { runMemoryRecallBench } from './memory-recall-bench.js';
import { memoryRecallOptions, memoryRecallSettings } from './memory-recall-options.js';
import { memoryRecallVerdict, renderMemoryRecallMarkdown } from './memory-recall-report.js';
import { goalVerdicts, renderMarkdown } from './report.js';
import { runSemaphoreBench } from './semaphore-bench.js';
import { loadBenchOptions, renderOverloadMarkdown, renderThroughputMarkdown, runOverloadBench, runThroughputBench } from './load-benches.js';
import { runStepGrowthBench } from './step-growth-bench.js';
import { renderStepGrowthMarkdown } from './step-growth-report.js';
import { runStepOverheadBench } from './step-overhead-bench.js';
import { stepOverheadOptions, stepOverheadSettings } from './step-overhead-options.js';
import { renderStepOverheadMarkdown, stepOverheadVerdict } from './step-overhead-report.js';

// `npm run bench`: run the benchmarks (all, or those named by --only / BENCH_ONLY) and write
// bench/results/<name>.{json,md}. Exits non-zero only when a bench itself failed (including
// failed calls), never for a missed goal.
const say = (line: string) => process.stdout.write(`${line}\n`);
const defaultResultsDir = fileURLToPath(new URL('../results/', import.meta.url));

try {
  const { only, argv } = selectBenchmarks({ argv: process.argv.slice(2), env: process.env });
  const semaphoreFlags = semaphoreSettings.map((s) => s.flag);
  const stepFlags = stepOverheadSettings.map((s) => s.flag);
  const memoryFlags = memoryRecallSettings.map((s) => s.flag);
  const contextFlags = contextBudgetSettings.map((s) => s.flag);
  // Parse every selected bench's options first, so a typo fails before anything starts.
  const semOpts = benchOptions({ argv, env: process.env, defaultResultsDir, ignore: [...stepFlags, ...memoryFlags, ...contextFlags] });
  const stepOpts = stepOverheadOptions({ argv, env: process.env, defaultResultsDir, ignore: [...semaphoreFlags, ...memoryFlags, ...contextFlags] });
  const memoryOpts = memoryRecallOptions({ argv, env: process.env, defaultResultsDir, ignore: [...semaphoreFlags, ...stepFlags, ...contextFlags] });
  const contextOpts = contextBudgetOptions({ argv, env: process.env, defaultResultsDir, ignore: [...semaphoreFlags, ...stepFlags, ...memoryFlags] });

  if (only.includes('semaphore')) {
    const report = await runSemaphoreBench(semOpts, say);
    await mkdir(semOpts.resultsDir, { recursive: true });
    await writeFile(join(semOpts.resultsDir, 'semaphore.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(semOpts.resultsDir, 'semaphore.md'), renderMarkdown(report));
    say(`wrote ${join(semOpts.resultsDir, 'semaphore.json')} and semaphore.md`);
    for (const line of goalVerdicts(report)) say(line);
    if (report.errors.length > 0 || report.runs.some((r) => r.errors > 0)) {
      process.stderr.write(`bench: ${report.runs.reduce((n, r) => n + r.errors, 0)} call(s) failed: ${report.errors.slice(0, 3).join('; ')}\n`);
      process.exitCode = 1;
    }
  }

  if (only.includes('step-overhead')) {
    const report = await runStepOverheadBench(stepOpts, say);
    await mkdir(stepOpts.resultsDir, { recursive: true });
    await writeFile(join(stepOpts.resultsDir, 'step-overhead.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(stepOpts.resultsDir, 'step-overhead.md'), renderStepOverheadMarkdown(report));
    say(`wrote ${join(stepOpts.resultsDir, 'step-overhead.json')} and step-overhead.md`);
    say(stepOverheadVerdict(report));
  }

  if (only.includes('step-growth')) {
    // By default the lengths and sizes issue 20 asks for; results go beside step-overhead's.
    const list = (v: string | undefined, d: number[]) => (v ? v.split(',').map((x) => Number.parseInt(x, 10)) : d);
    const growthOpts = {
      steps: 20,
      tasks: Number.parseInt(process.env.BENCH_GROWTH_TASKS ?? '5', 10),
      lengths: list(process.env.BENCH_GROWTH_LENGTHS, [10, 50, 100, 200]),
      padBytes: list(process.env.BENCH_GROWTH_PADS, [100, 20_000]),
    };
    const report = await runStepGrowthBench(growthOpts, say);
    await mkdir(stepOpts.resultsDir, { recursive: true });
    await writeFile(join(stepOpts.resultsDir, 'step-growth.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(stepOpts.resultsDir, 'step-growth.md'), renderStepGrowthMarkdown(report));
    say(`wrote ${join(stepOpts.resultsDir, 'step-growth.json')} and step-growth.md`);
  }

  if (only.includes('memory-recall')) {
    const report = await runMemoryRecallBench(memoryOpts, say);
    await mkdir(memoryOpts.resultsDir, { recursive: true });
    await writeFile(join(memoryOpts.resultsDir, 'memory-recall.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(memoryOpts.resultsDir, 'memory-recall.md'), renderMemoryRecallMarkdown(report));
    say(`wrote ${join(memoryOpts.resultsDir, 'memory-recall.json')} and memory-recall.md`);
    say(memoryRecallVerdict(report));
  }

  if (only.includes('throughput') || only.includes('overload')) {
    // Issue 20's load runs: sizes from BENCH_LOAD_* (the defaults take tens of minutes on 2 cores).
    const loadOpts = loadBenchOptions(process.env);
    if (only.includes('throughput')) {
      const report = await runThroughputBench(loadOpts, say);
      await writeResults(stepOpts.resultsDir, 'throughput', report, renderThroughputMarkdown(report));
      say(`throughput goal (>= 0.95 of N/L in flight): ${report.goal_met ? 'met' : 'not met'}`);
    }
    if (only.includes('overload')) {
      const report = await runOverloadBench(loadOpts, say);
      await writeResults(stepOpts.resultsDir, 'overload', report, renderOverloadMarkdown(report));
      say(`overload goal (all complete, none timed out): ${report.goal_met ? 'met' : 'not met'}`);
    }
  }

  if (only.includes('context-budget')) {
    const report = await runContextBudgetBench(contextOpts, say);
    await mkdir(contextOpts.resultsDir, { recursive: true });
    await writeFile(join(contextOpts.resultsDir, 'context-budget.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(contextOpts.resultsDir, 'context-budget.md'), renderContextBudgetMarkdown(report));
    say(`wrote ${join(contextOpts.resultsDir, 'context-budget.json')} and context-budget.md`);
    say(contextBudgetVerdict(report));
  }
} catch (err) {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
} finally {
  await cleanupAll().catch(() => {});
}

async function writeResults(dir: string, name: string, report: unknown, markdown: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(dir, `${name}.md`), markdown);
  say(`wrote ${join(dir, `${name}.json`)} and ${name}.md`);
}
