import { describe, expect, it } from 'vitest';
import type { ViteUserConfig } from 'vitest/config';

// Loaded at run time by URL, so the type check does not take the config files (and their .ts imports) in.
const load = async (file: string) => ((await import(new URL(file, import.meta.url).href)) as { default: ViteUserConfig }).default;

describe('the fault suite config (npm run test:faults)', () => {
  it('runs the fault files only, one at a time, not the e2e and unit files of the tests project', async () => {
    const faults = await load('../vitest.faults.config.ts');
    expect(faults.test?.include).toEqual(['faults/**/*.test.ts']);
    expect(faults.test?.fileParallelism).toBe(false);
    // npm test's config of this project is the one that runs e2e/ (and never faults/).
    expect((await load('../vitest.config.ts')).test?.include).not.toContain('faults/**/*.test.ts');
  });
});
