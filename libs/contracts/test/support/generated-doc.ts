import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

/** The staleness test of a generated document under docs/: the committed file must be exactly what the code renders. */
export function itIsCurrent(file: string, render: () => string, script: string): void {
  it('is exactly what the contracts generate', () => {
    let current: string | undefined;
    try {
      current = readFileSync(fileURLToPath(new URL(`../../../../docs/${file}`, import.meta.url)), 'utf8');
    } catch {
      current = undefined;
    }
    expect(current, `docs/${file} is missing or stale: run \`npm run build && npm run ${script}\``).toBe(render());
  });
}
