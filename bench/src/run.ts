import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupAll } from '@hermes/testkit';
import { benchOptions } from './bench-options.js';
import { goalVerdicts, renderMarkdown } from './report.js';
import { runSemaphoreBench } from './semaphore-bench.js';

// `npm run bench`: run the semaphore benchmark and write bench/results/semaphore.{json,md}.
// Exits non-zero only when the bench itself failed (including failed calls), never for a missed goal.
const say = (line: string) => process.stdout.write(`${line}\n`);

try {
  const opts = benchOptions({ argv: process.argv.slice(2), env: process.env, defaultResultsDir: fileURLToPath(new URL('../results/', import.meta.url)) });
  const report = await runSemaphoreBench(opts, say);
  await mkdir(opts.resultsDir, { recursive: true });
  await writeFile(join(opts.resultsDir, 'semaphore.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(opts.resultsDir, 'semaphore.md'), renderMarkdown(report));
  say(`wrote ${join(opts.resultsDir, 'semaphore.json')} and semaphore.md`);
  for (const line of goalVerdicts(report)) say(line);
  if (report.errors.length > 0 || report.runs.some((r) => r.errors > 0)) {
    process.stderr.write(`bench: ${report.runs.reduce((n, r) => n + r.errors, 0)} call(s) failed: ${report.errors.slice(0, 3).join('; ')}\n`);
    process.exitCode = 1;
  }
} catch (err) {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
} finally {
  await cleanupAll().catch(() => {});
}
