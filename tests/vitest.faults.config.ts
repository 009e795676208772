import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared.ts';

// The fault suite (faults/): one Hermes through pauses, kills and restarts, and a 3-node cluster.
// `npm test` runs it at the CI size (FAULT_SCALE=ci) after the e2e files (HERMES_TEST_FAULTS=0 leaves it out; scripts/run-tests.mjs);
// `npm run test:faults` at the size.
const config = mergeConfig(shared, defineConfig({ test: { fileParallelism: false } }));
// Set, not merged: mergeConfig concatenates arrays, so the shared include (test/, e2e/) would run
// every e2e file of the tests project before the faults.
config.test!.include = ['faults/**/*.test.ts'];
export default config;
