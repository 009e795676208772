import { defineConfig } from 'vitest/config';

// Tests import sibling libraries from source (the "@hermes/source" export condition),
// so a library change is tested without a rebuild. Child processes started by e2e
// tests run the built dist/ instead, which is why `npm test` builds first.
export default defineConfig({
  resolve: { conditions: ['@hermes/source'] },
  ssr: { resolve: { conditions: ['@hermes/source'] } },
  test: {
    include: ['test/**/*.test.ts', 'e2e/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
