import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('formatting', () => {
  // Generous: prettier reads every source file of the repo, on a loaded 2-core machine.
  it('every TypeScript and JavaScript file is as Prettier writes it (npm run format fixes it)', { timeout: 120_000 }, async () => {
    const prettier = `${root}node_modules/.bin/prettier`;
    const run = await promisify(execFile)(prettier, ['--list-different', '.'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (err: { code?: number; stdout?: string }) => ({ code: err.code ?? 1, out: err.stdout ?? '' }),
    );
    expect(run.out.split('\n').filter(Boolean), 'files to run `npm run format` on').toEqual([]);
    expect(run.code).toBe(0);
  });
});
