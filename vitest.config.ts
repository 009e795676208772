import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['libs/*', 'services/*', 'tools/*', 'tests', 'bench'],
    // vitest's default on 2 cores is a single worker. Most files here wait on real processes and
    // real time more than they compute, so two run side by side (scripts/run-tests.mjs also runs
    // the serial e2e project next to them).
    maxWorkers: 2,
  },
});
