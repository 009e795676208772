import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared.ts';

// Each file starts a whole Hermes (nats-server, redis-server and every service as a process): run
// them one at a time, so a 2-core machine does not time out processes of one file while starting another's.
export default mergeConfig(shared, defineConfig({ test: { fileParallelism: false } }));
