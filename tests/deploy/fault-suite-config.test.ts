import { describe, expect, it } from 'vitest';
import faults from '../vitest.faults.config.ts';
import tests from '../vitest.config.ts';

describe('the fault suite config (npm run test:faults)', () => {
  it('runs the fault files only, one at a time, not the e2e and unit files of the tests project', () => {
    expect(faults.test?.include).toEqual(['faults/**/*.test.ts']);
    expect(faults.test?.fileParallelism).toBe(false);
    // npm test's config of this project is the one that runs e2e/ (and never faults/).
    expect(tests.test?.include).not.toContain('faults/**/*.test.ts');
  });
});
