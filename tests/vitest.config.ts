import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared.ts';

// Each file starts a whole Hermes (nats-server, redis-server and every service as a process): run
// them one at a time, so a 2-core machine does not time out processes of one file while starting another's.
// Files that need only the stock settings share one stack instead (e2e/shared-stack.ts), started
// by the global setup on first use.
// deploy/: checks of the Helm chart, compose file and Dockerfile (no processes). faults/ has its
// own config (vitest.faults.config.ts, `npm run test:faults`).
export default mergeConfig(
  shared,
  defineConfig({ test: { fileParallelism: false, include: ['deploy/**/*.test.ts'], globalSetup: ['e2e/shared-stack/global-setup.ts'] } }),
);
