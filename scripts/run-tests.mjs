#!/usr/bin/env node
// `npm test` after the build. The cross-service e2e files (project @hermes/tests) each start a whole
// Hermes and run one at a time within a lane; every other project runs in a vitest of its own, side
// by side with the lanes. Inside one vitest they could not: a project without file parallelism is put
// in a group that starts only when every other file has finished, so its time added to the rest.
// Most of an e2e file's time is waiting on real processes and real time (ack waits, outages,
// back-offs), which the other runs fill. The last lane then runs the fault suite (tests/faults) at
// its CI size (FAULT_SCALE=ci; `npm run test:faults` runs the full size).
//
// HERMES_TEST_E2E_LANES: how many e2e files run at once (vitest --shard splits them), side by side
// with the other projects. 0 runs everything one vitest after another: units, e2e, faults. The
// default is 0 on fewer than 4 cores: on 2 cores the side-by-side layout took 552-580 s instead of
// about 20 minutes, but 3 of 4 fresh-clone runs failed on waits and timeouts of a starved machine.
// HERMES_TEST_FAULTS=0 leaves the fault suite out. Arguments are passed to every vitest (e.g. a
// reporter). Lines are prefixed with their run; the exit code is the first failure's.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';

const vitest = new URL('../node_modules/vitest/vitest.mjs', import.meta.url).pathname;
const extra = process.argv.slice(2);
const lanes = Number(process.env.HERMES_TEST_E2E_LANES ?? (availableParallelism() >= 4 ? 2 : 0));
if (!Number.isInteger(lanes) || lanes < 0) {
  console.error(`HERMES_TEST_E2E_LANES must be a whole number, 0 or more, got ${process.env.HERMES_TEST_E2E_LANES}`);
  process.exit(2);
}

const withFaults = process.env.HERMES_TEST_FAULTS !== '0';
const faults = { args: ['run', '--root', 'tests', '--config', 'vitest.faults.config.ts', ...extra], env: { FAULT_SCALE: process.env.FAULT_SCALE ?? 'ci' } };
const units = { args: ['run', '--project', '!@hermes/tests', ...extra] };
/** Each run is one or more vitest invocations, one after another. */
const runs =
  lanes === 0
    ? [{ label: 'tests', steps: [units, { args: ['run', '--project', '@hermes/tests', ...extra] }, ...(withFaults ? [faults] : [])] }]
    : [
        { label: 'units', steps: [units] },
        ...Array.from({ length: lanes }, (_, i) => ({
          label: lanes === 1 ? 'e2e' : `e2e-${i + 1}`,
          steps: [
            { args: ['run', '--project', '@hermes/tests', ...(lanes > 1 ? [`--shard=${i + 1}/${lanes}`, '--passWithNoTests'] : []), ...extra] },
            ...(withFaults && i === lanes - 1 ? [faults] : []),
          ],
        })),
      ];
const width = Math.max(...runs.map((r) => r.label.length));

/** Runs one vitest; resolves to its exit code. */
function vitestRun(tag, step, onChild) {
  // Colours only when a person watches; CI logs stay plain.
  const env = { ...process.env, ...step.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : { NO_COLOR: '1' }) };
  const child = spawn(process.execPath, [vitest, ...step.args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  onChild(child);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(tag + line + '\n'));
  }
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

const live = new Set();
const children = runs.map(({ label, steps }) => {
  const tag = `[${label.padEnd(width)}] `;
  const done = (async () => {
    let first = 0;
    // A lane goes on after a failed step (its failures are reported) and exits with the first failure.
    for (const step of steps) {
      const code = await vitestRun(tag, step, (child) => {
        live.add(child);
        child.on('close', () => live.delete(child));
      });
      if (first === 0) first = code;
    }
    return first;
  })();
  return { tag, done };
});

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const child of live) child.kill(sig);
  });
}

const codes = await Promise.all(children.map((c) => c.done));
children.forEach(({ tag }, i) => process.stdout.write(`${tag}${codes[i] === 0 ? 'passed' : `FAILED (exit ${codes[i]})`}\n`));
process.exit(codes.find((c) => c !== 0) ?? 0);
