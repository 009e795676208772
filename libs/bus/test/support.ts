import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Bus, type BusOptions } from '@hermes/bus';
import type { RuntimeJob } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';

let prefixes = 0;

/** A subject prefix of its own per test, so streams and consumers of one test never meet another's. */
export function uniquePrefix(label: string): string {
  return `${label}${++prefixes}${process.pid}`.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 32);
}

/** A Bus on the given server with a silent logger. */
export function connectBus(servers: string, opts: Partial<BusOptions> = {}): Promise<Bus> {
  return Bus.connect({ servers, name: 'bus-test', logger: createLogger({ service: 'bus-test', level: 'silent' }), ...opts });
}

/** A RuntimeJob that satisfies its contract. */
export function runtimeJob(jobId: string): RuntimeJob {
  return { job_id: jobId, task_id: 't1', subtask_id: 's1', user_id: 'u1', session_id: 'sess1', goal: 'say hi', model_role: 'worker' };
}

// One polling helper for every package's tests.
export { eventually } from '@hermes/testkit';

/** Absolute path of a fixture script; fixtures import the built `@hermes/bus`, so dist/ must exist. */
export function fixture(name: string): string {
  const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  if (!existsSync(dist)) throw new Error(`${dist} is missing: build first (npx tsc -b libs/bus/tsconfig.json, or npm test at the root)`);
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}
