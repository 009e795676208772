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

// The published packages as other teams get them: `npm pack` of each, installed from the tarballs
// into scratch projects outside the workspace (their npm dependencies come from the registry), then
// run from there against the running Hermes. Nothing of the monorepo is on their module path.
// A team hosting tools or submitting tasks installs @hermes/contracts and @hermes/tool-sdk; an
// operator installs @hermes/cli, which needs exactly the published bus, config, semaphore,
// telemetry and contracts (none of them on the registry, so each comes from its tarball).

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/scratch/', import.meta.url));
const TEAM_PACKAGES = ['libs/contracts', 'libs/tool-sdk'];
const CLI_PACKAGES = ['libs/contracts', 'libs/bus', 'libs/config', 'libs/semaphore', 'libs/telemetry', 'tools/cli'];

let stack: SharedStack;
let scratch: string;
let provider: ChildService | undefined;

/** Packs each package once and returns its `file:` tarball spec by package name. */
async function pack(dirs: string[], packs: string): Promise<Record<string, string>> {
  const tarballs: Record<string, string> = {};
  for (const dir of dirs) {
    const { stdout } = await run('npm', ['pack', join(repo, dir), '--pack-destination', packs, '--json'], { cwd: scratch });
    const [packed] = JSON.parse(stdout) as { name: string; filename: string }[];
    tarballs[packed!.name] = `file:${join(packs, packed!.filename)}`;
  }
  return tarballs;
}

/** A project of its own that depends on the given tarballs only, installed from them and the registry. */
async function installProject(name: string, dependencies: Record<string, string>): Promise<void> {
  const project = join(scratch, name);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name, private: true, type: 'module', dependencies }, null, 2));
  // The registry is reachable (and its cache warm from the workspace's install, hence --prefer-offline);
  // an install on a loaded 2-core machine still takes 10-60 s, hence the deadline below.
  await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'], { cwd: project, timeout: 240_000 });
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hermes-scratch-'));
  const packs = join(scratch, 'packs');
  mkdirSync(packs);
  const tarballs = await pack([...new Set([...TEAM_PACKAGES, ...CLI_PACKAGES])], packs);
  const only = (dirs: string[]) => Object.fromEntries(Object.entries(tarballs).filter(([name]) => dirs.some((d) => name === `@hermes/${d.split('/')[1]}`)));
  // The two installs run side by side: most of their time is waiting on the registry and the disk.
  await Promise.all([installProject('team-project', only(TEAM_PACKAGES)), installProject('ops-project', only(CLI_PACKAGES))]);
  for (const f of readdirSync(fixtures)) copyFileSync(join(fixtures, f), join(scratch, 'team-project', f));
  stack = await sharedStack();
}, 300_000);

afterAll(async () => {
  await provider?.kill();
  await stack?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** What every published tarball must carry: licence, changelog, types, built code, publishable metadata. */
function expectPublishable(project: string, name: string): void {
  const installed = join(scratch, project, 'node_modules', '@hermes', name);
  for (const file of ['LICENSE', 'CHANGELOG.md', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts'])
    expect(existsSync(join(installed, file)), `${name}/${file}`).toBe(true);
  expect(readFileSync(join(installed, 'LICENSE'), 'utf8'), `${name}/LICENSE`).toBe(readFileSync(join(repo, 'LICENSE'), 'utf8'));
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(pkg, name).toMatchObject({ license: 'Apache-2.0', engines: { node: '>=20' }, repository: { directory: expect.any(String) } });
  expect(pkg.private, name).toBeUndefined();
  expect(pkg.version, name).toMatch(/^\d+\.\d+\.\d+$/);
  // Every dependency of ours is a semver range on a published version, never the workspace's `*`.
  for (const [dep, range] of Object.entries((pkg.dependencies ?? {}) as Record<string, string>))
    if (dep.startsWith('@hermes/')) expect(range, `${name} -> ${dep}`).toMatch(/^\^\d+\.\d+\.\d+$/);
  // Its own @hermes dependencies are the installed tarballs, not copies from elsewhere.
  expect(existsSync(join(installed, 'node_modules', '@hermes')), `${name} nests no @hermes package`).toBe(false);
}

describe('published packages, installed from their tarballs outside the workspace', () => {
  it('each tarball carries its licence, changelog, types and built code, and no workspace link', () => {
    for (const name of ['contracts', 'tool-sdk']) expectPublishable('team-project', name);
    // Only the two packages of ours: nothing else of @hermes came along.
    const modules = join(scratch, 'team-project', 'node_modules');
    expect(readdirSync(join(modules, '@hermes')).sort()).toEqual(['contracts', 'tool-sdk']);
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

  it('@hermes/cli installs with exactly the published packages it needs and no service host or testkit', () => {
    for (const name of ['cli', 'bus', 'config', 'semaphore', 'telemetry', 'contracts']) expectPublishable('ops-project', name);
    expect(readdirSync(join(scratch, 'ops-project', 'node_modules', '@hermes')).sort()).toEqual([
      'bus',
      'cli',
      'config',
      'contracts',
      'semaphore',
      'telemetry',
    ]);
    expect(existsSync(join(scratch, 'ops-project', 'node_modules', '.bin', 'hermes'))).toBe(true);
  });

  it('the installed hermes bin runs a task to completed and then finds it with status and tasks', async () => {
    const project = join(scratch, 'ops-project');
    const user = 'ops-scratch-user';
    const goal = 'hello from the installed cli';
    // HERMES_* and NATS_* of the test process must not leak in: the bin gets only what an operator sets.
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, NATS_URL: stack.natsUrl };
    const hermes = (...args: string[]) => run('npx', ['--no-install', 'hermes', ...args], { cwd: project, env, timeout: 60_000 });
    const { stdout, stderr } = await hermes('run', '--json', '--user', user, goal);
    const taskId = /^task (t_[0-9a-f]{32})$/m.exec(stderr)?.[1];
    expect(taskId, stderr).toBeDefined();
    const last = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TaskEvent)
      .at(-1)!;
    expect(last.subject).toBe(taskId);
    expect(taskEventData(last, 'completed')?.result.output).toBe(`Scripted answer: ${goal}`);

    // The dispatcher records the end of the task as it publishes the event; its view may trail by a moment.
    const status = await eventually(
      async () => {
        const view = JSON.parse((await hermes('status', taskId!, '--json')).stdout) as Record<string, unknown>;
        return view.status === 'completed' && view;
      },
      30_000,
      'hermes status reports completed',
    );
    expect(status).toMatchObject({ task_id: taskId, user_id: user, goal });
    const listed = JSON.parse((await hermes('tasks', '--user', user, '--json')).stdout) as { tasks: { task_id: string }[] };
    expect(listed.tasks.map((t) => t.task_id)).toEqual([taskId]);
    // Four bin runs through npx (about 1-3 s each to start on a loaded 2-core machine) and one scripted task: 90 s is generous.
  }, 90_000);
});
