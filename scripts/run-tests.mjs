#!/usr/bin/env node
// `npm test` after the build. The cross-service e2e files (project @hermes/tests) each start a whole
// Hermes and run one at a time within a lane; every other project runs in a vitest of its own, side
// by side with the lanes. Inside one vitest they could not: a project without file parallelism is put
// in a group that starts only when every other file has finished, so its time added to the rest.
// Most of an e2e file's time is waiting on real processes and real time (ack waits, outages,
// back-offs), which the other runs fill.
//
// HERMES_TEST_E2E_LANES (default 2): how many e2e files run at once (vitest --shard splits them).
// Arguments are passed to every vitest (e.g. a reporter). Lines are prefixed with their run; the
// exit code is the first failure's.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const vitest = new URL('../node_modules/vitest/vitest.mjs', import.meta.url).pathname;
const extra = process.argv.slice(2);
const lanes = Number(process.env.HERMES_TEST_E2E_LANES ?? 2);
if (!Number.isInteger(lanes) || lanes < 1) {
  console.error(`HERMES_TEST_E2E_LANES must be a whole number of at least 1, got ${process.env.HERMES_TEST_E2E_LANES}`);
  process.exit(2);
}

const runs = [
  { label: 'units', args: ['run', '--project', '!@hermes/tests', ...extra] },
  ...Array.from({ length: lanes }, (_, i) => ({
    label: lanes === 1 ? 'e2e' : `e2e-${i + 1}`,
    args: ['run', '--project', '@hermes/tests', ...(lanes > 1 ? [`--shard=${i + 1}/${lanes}`, '--passWithNoTests'] : []), ...extra],
  })),
];
const width = Math.max(...runs.map((r) => r.label.length));

const children = runs.map(({ label, args }) => {
  // Colours only when a person watches; CI logs stay plain.
  const env = { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : { NO_COLOR: '1' }) };
  const child = spawn(process.execPath, [vitest, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const tag = `[${label.padEnd(width)}] `;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(tag + line + '\n'));
  }
  return { tag, child, done: new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))) };
});

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const { child } of children) child.kill(sig);
  });
}

const codes = await Promise.all(children.map((c) => c.done));
children.forEach(({ tag }, i) => process.stdout.write(`${tag}${codes[i] === 0 ? 'passed' : `FAILED (exit ${codes[i]})`}\n`));
process.exit(codes.find((c) => c !== 0) ?? 0);
