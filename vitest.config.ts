import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['libs/*', 'services/*', 'tools/*', 'tests', 'bench'],
    // No maxWorkers: vitest's default (cores - 1) is one file at a time on 2 cores, where two side by
    // side starved each other's processes past their waits (see scripts/run-tests.mjs).
  },
});
