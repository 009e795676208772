import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Bus, type BusOptions } from '@hermes/bus';
import type { RuntimeJob } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';

export { eventually } from '@hermes/testkit';

let prefixes = 0;

/** A subject prefix of its own per test, so the streams of one hosted service never meet another's. */
export function uniquePrefix(label: string): string {
  return `${label}${++prefixes}${process.pid}`.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 32);
}

/** A Bus on the given server with a silent logger: the test's side of a hosted service. */
export function connectBus(servers: string, opts: Partial<BusOptions> = {}): Promise<Bus> {
  return Bus.connect({ servers, name: 'service-host-test', logger: createLogger({ service: 'service-host-test', level: 'silent' }), ...opts });
}

/** A RuntimeJob that satisfies its contract, with the goal the stalling fixture acts on. */
export const runtimeJob = (jobId: string, goal = 'say hi'): RuntimeJob => ({
  job_id: jobId,
  task_id: 't1',
  subtask_id: 's1',
  user_id: 'u1',
  session_id: 'sess1',
  goal,
  model_role: 'worker',
});

/** Absolute path of a fixture script; fixtures import the built `@hermes/service-host`, so dist/ must exist. */
export function fixture(name: string): string {
  const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  if (!existsSync(dist)) throw new Error(`${dist} is missing: build first (npx tsc -b libs/service-host/tsconfig.json, or npm test at the root)`);
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}
