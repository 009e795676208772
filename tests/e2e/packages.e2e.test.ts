import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '@hermes/bus';
import { contracts, taskEventData, type TaskEvent } from '@hermes/contracts';
import { eventually, startChildService, type ChildService } from '@hermes/testkit';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { listedTools } from './tool-fixtures.js';

// The published packages as another team gets them: `npm pack` of @hermes/contracts and
// @hermes/tool-sdk, installed from the tarballs into a scratch project outside the workspace
// (their npm dependencies come from the registry), then a tool provider and a task submitter run
// from there against the running Hermes. Nothing of the monorepo is on their module path.

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/scratch/', import.meta.url));
const PACKAGES = ['libs/contracts', 'libs/tool-sdk'];

let stack: SharedStack;
let scratch: string;
let provider: ChildService | undefined;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hermes-scratch-'));
  const packs = join(scratch, 'packs');
  mkdirSync(packs);
  const tarballs: Record<string, string> = {};
  for (const dir of PACKAGES) {
    const { stdout } = await run('npm', ['pack', join(repo, dir), '--pack-destination', packs, '--json'], { cwd: scratch });
    const [packed] = JSON.parse(stdout) as { name: string; filename: string }[];
    tarballs[packed!.name] = `file:${join(packs, packed!.filename)}`;
  }
  const project = join(scratch, 'team-project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'team-project', private: true, type: 'module', dependencies: tarballs }, null, 2));
  // The registry is reachable; an install on a loaded machine can take a while, hence the deadline below.
  await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, timeout: 240_000 });
  for (const f of readdirSync(fixtures)) copyFileSync(join(fixtures, f), join(project, f));
  stack = await sharedStack();
}, 300_000);

afterAll(async () => {
  await provider?.kill();
  await stack?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('published packages, installed from their tarballs outside the workspace', () => {
  it('each tarball carries its licence, changelog, types and built code, and no workspace link', () => {
    for (const name of ['contracts', 'tool-sdk']) {
      const installed = join(scratch, 'team-project', 'node_modules', '@hermes', name);
      for (const file of ['LICENSE', 'CHANGELOG.md', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts'])
        expect(existsSync(join(installed, file)), `${name}/${file}`).toBe(true);
      const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
      expect(pkg).toMatchObject({ license: 'Apache-2.0', engines: { node: '>=20' } });
      expect(pkg.private).toBeUndefined();
      expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    }
    // Only the two packages of ours: nothing else of @hermes came along.
    const modules = join(scratch, 'team-project', 'node_modules');
    expect(readdirSync(join(modules, '@hermes')).sort()).toEqual(['contracts', 'tool-sdk']);
    // tool-sdk's own @hermes/contracts is the installed tarball, not a copy from elsewhere.
    expect(existsSync(join(modules, '@hermes', 'tool-sdk', 'node_modules', '@hermes'))).toBe(false);
    // A provider needs @opentelemetry/api only: no service host, no OpenTelemetry SDK.
    expect(readdirSync(join(modules, '@opentelemetry'))).toEqual(['api']);
  });

  it('a provider run from the scratch project is discovered by the toolbus and answers its calls', async () => {
    provider = await startChildService({ name: 'scratch-provider', entry: join(scratch, 'team-project', 'provider.mjs'), env: { NATS_URL: stack.natsUrl } });
    await provider.waitForLog(/"ready"/, 30_000);
    // Announce protocol: the toolbus lists the tool once it heard the announcement.
    await eventually(async () => (await listedTools(stack.bus, ['admin'])).includes('scratch_shout'), 20_000, 'the toolbus lists scratch_shout');
    // Exec protocol: one call through the whole ToolBus path reaches the provider and comes back.
    const reply = await request(
      stack.bus,
      contracts.toolDebugCall,
      { tool: 'scratch_shout', arguments: JSON.stringify({ text: 'from the tarball' }) },
      { timeoutMs: 20_000 },
    );
    expect(reply).toMatchObject({ status: 'ok', result: { shouted: 'FROM THE TARBALL' } });
  });

  it('a submitter run from the scratch project submits a task and reads it to completed', async () => {
    const goal = 'hello from a scratch project';
    const { stdout } = await run(process.execPath, [join(scratch, 'team-project', 'submitter.mjs')], {
      env: { ...process.env, NATS_URL: stack.natsUrl, GOAL: goal },
      timeout: 60_000,
    });
    const [first, ...events] = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ task_id: expect.stringMatching(/^t_[0-9a-f]{32}$/), ack: { seq: expect.any(Number) } });
    const last = events.at(-1) as TaskEvent;
    expect(last.subject).toBe(first!.task_id);
    expect(taskEventData(last, 'completed')?.result.output).toBe(`Scripted answer: ${goal}`);
  });
});
