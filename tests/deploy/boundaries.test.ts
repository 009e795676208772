import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from './chart-files.js';

// scripts/check-boundaries.mjs holds the packages table of CONTRIBUTING.md and each package.json to
// what the code imports; run here so `npm test` fails on a forbidden or undeclared import.
const script = join(root, 'scripts/check-boundaries.mjs');

function check(args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [script, ...args], { timeout: 60_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

const scratch = mkdtempSync(join(tmpdir(), 'hermes-boundaries-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A workspace of one package with the given package.json and one source file (and more packages without sources). */
function workspace(pkg: object, source: string, others: Record<string, object> = {}): string {
  const dir = mkdtempSync(join(scratch, 'ws-'));
  mkdirSync(join(dir, 'libs/bus/src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'ws', workspaces: ['libs/*'] }));
  writeFileSync(join(dir, 'libs/bus/package.json'), JSON.stringify(pkg));
  writeFileSync(join(dir, 'libs/bus/src/index.ts'), source);
  for (const [lib, other] of Object.entries(others)) {
    mkdirSync(join(dir, 'libs', lib));
    writeFileSync(join(dir, 'libs', lib, 'package.json'), JSON.stringify(other));
  }
  return dir;
}

describe('package boundaries', () => {
  it('hold in this repository: every import is allowed by the packages table and declared in its package.json', async () => {
    const result = await check();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('fail on a Hermes package the table does not allow and on a dependency package.json does not declare', async () => {
    const dir = workspace(
      { name: '@hermes/bus', dependencies: { '@hermes/llm': '*' } },
      "import { LlmClient } from '@hermes/llm';\nimport pad from 'left-pad';\nexport const x = [LlmClient, pad];\n",
    );

    const result = await check(['--root', dir]);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('libs/bus/src/index.ts: @hermes/bus may not depend on @hermes/llm');
    expect(result.stderr).toContain('libs/bus/src/index.ts: imports left-pad, not in its package.json dependencies');
  });

  it('fail on a published package that depends on an unpublished Hermes package or on the workspace range', async () => {
    const dir = workspace(
      { name: '@hermes/bus', dependencies: { '@hermes/contracts': '*', '@hermes/telemetry': '^0.1.0' } },
      "import { HermesError } from '@hermes/contracts';\nimport { createLogger } from '@hermes/telemetry';\nexport const x = [HermesError, createLogger];\n",
      { contracts: { name: '@hermes/contracts', version: '0.1.0' }, telemetry: { name: '@hermes/telemetry', version: '0.1.0', private: true } },
    );

    const result = await check(['--root', dir]);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('libs/bus/package.json: published @hermes/bus depends on @hermes/contracts at "*", not a version range');
    expect(result.stderr).toContain('libs/bus/package.json: published @hermes/bus depends on @hermes/telemetry, which is not published');
    expect(result.stderr).not.toContain('@hermes/contracts, which is not published');
  });
});
