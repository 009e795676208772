import { readFileSync } from 'node:fs';
import { Bus } from '@hermes/bus';
import { DistributedSemaphore, readPoolStatus, type PoolSettings, type PoolStatus } from '@hermes/semaphore';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/index.js';
import { captureOutput } from './cli-runner.js';

const logger = createLogger({ service: 'cli-llm-test', level: 'silent' });
const settings: Record<string, PoolSettings> = { alpha: { capacity: 2 }, beta: { capacity: 1, tpm: 6000 } };
let natsUrl: string;
let bus: Bus;
let sem: DistributedSemaphore;
let waiting: Promise<unknown>;

/**
 * Pools appear once a call took a permit, so the test takes them the way LlmClient does, in the
 * bucket of the default prefix: alpha holds one permit; beta was rate-limited and has a waiter.
 */
beforeAll(async () => {
  natsUrl = (await startNatsServer()).url;
  bus = await Bus.connect({ servers: natsUrl, name: 'cli-llm-test', logger });
  const kv = await bus.kv('llmSemaphore');
  sem = await DistributedSemaphore.open({ kv, poolSettings: (p) => settings[p] ?? { capacity: 1 } });
  await sem.acquire('alpha');
  await (await sem.acquire('beta', { estimatedTokens: 1000 })).release({ tokens: 1000, rateLimitedForMs: 60_000 });
  waiting = sem.acquire('beta').catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
});

afterAll(async () => {
  await sem?.close();
  await waiting;
  await bus?.drain();
  await cleanupAll();
});

async function hermes(env: Record<string, string>, ...argv: string[]) {
  const stdout = captureOutput();
  const stderr = captureOutput();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: { NATS_URL: natsUrl, ...env } });
  return { code, stdout, stderr };
}
const cli = (...argv: string[]) => hermes({}, ...argv);

/** The table's cells, split on the runs of spaces between columns. */
const cells = (line: string | undefined) => (line ?? '').split(/ {2,}/);

describe('hermes llm status', () => {
  it('prints one row per pool: capacity, in use, waiters, back-off and token budget', async () => {
    const { code, stdout, stderr } = await cli('llm', 'status');

    expect(stderr.text()).toBe('');
    expect(code).toBe(0);
    const [header, alpha, beta, ...rest] = stdout.lines();
    expect(cells(header)).toEqual(['POOL', 'CAPACITY', 'IN USE', 'WAITERS', 'BACK-OFF', 'TOKENS']);
    expect(cells(alpha)).toEqual(['alpha', '2', '1', '0', '-', '-']);
    const [name, capacity, inUse, waiters, backoff, tokens] = cells(beta);
    expect([name, capacity, inUse, waiters]).toEqual(['beta', '1', '0', '1']);
    expect(backoff).toMatch(/^until \d{4}-\d\d-\d\dT\S+Z \(rate_limited\)$/);
    expect(tokens).toMatch(/^5\d{3}\/6000 per min$/);
    expect(rest).toEqual([]);
  });

  it('prints the pools as JSON with --json', async () => {
    const { code, stdout } = await cli('llm', 'status', '--json');

    expect(code).toBe(0);
    const pools = JSON.parse(stdout.text()) as PoolStatus[];
    expect(pools.map((p) => p.pool)).toEqual(['alpha', 'beta']);
    expect(pools[0]).toMatchObject({ capacity: 2, configured_capacity: 2, in_use: 1, waiters: 0, backoff_until: null, tpm: null, tokens_available: null });
    expect(pools[1]).toMatchObject({ capacity: 1, in_use: 0, waiters: 1, backoff_reason: 'rate_limited', tpm: 6000 });
  });

  it('says so when no pool has been used yet', async () => {
    const { code, stdout } = await hermes({ HERMES_SUBJECT_PREFIX: 'fresh' }, 'llm', 'status');

    expect(code).toBe(0);
    expect(stdout.text()).toBe('no pool has been used yet (a pool appears in fresh_llm_semaphore with its first LLM call)\n');
  });
});

describe('hermes llm status, servers', () => {
  // Profile records as a runtime wrote them at start (captured in the contracts' fixtures): one
  // detected from Ollama's /api/show, one configured in LLM_POOLS; and one that does not read.
  const fixture = (what: string) => readFileSync(new URL(`../../../libs/contracts/test/fixtures/stored.pool-profile.v1.${what}.json`, import.meta.url), 'utf8');
  const prefix = 'servers';

  beforeAll(async () => {
    const own = await Bus.connect({ servers: natsUrl, name: 'cli-llm-servers', logger, prefix });
    const kv = await own.kv('llmSemaphore');
    const detected = JSON.parse(fixture('ollama-detected-num-ctx')) as Record<string, unknown>;
    const configured = { ...(JSON.parse(fixture('openai-configured')) as Record<string, unknown>), pool: 'openai-main' };
    await kv.put('profile.ollama.worker', JSON.stringify(detected));
    await kv.put('profile.openai-main.planner', JSON.stringify({ ...configured, role: 'planner' }));
    await kv.put('profile.broken.worker', JSON.stringify({ v: 1, pool: 'broken' }));
    const sem = await DistributedSemaphore.open({ kv, poolSettings: () => ({ capacity: 2 }) });
    await (await sem.acquire('ollama')).release();
    await sem.close();
    await own.drain();
  });

  it("shows each role's server: provider profile, context window detected (from what) or configured, and what it supports", async () => {
    const { code, stdout, stderr } = await hermes({ HERMES_SUBJECT_PREFIX: prefix }, 'llm', 'status');

    expect(code).toBe(0);
    // The pool table, a blank line, the server table.
    expect(stdout.text()).toContain('\n\nPOOL');
    const lines = stdout.lines();
    const servers = lines.findIndex((l) => cells(l)[1] === 'ROLE');
    expect(cells(lines[0])[0]).toBe('POOL');
    expect(cells(lines[1])[0]).toBe('ollama');
    expect(servers).toBe(2);
    const [header, ollama, openai, ...rest] = lines.slice(servers);
    expect(cells(header)).toEqual(['POOL', 'ROLE', 'MODEL', 'PROVIDER', 'CONTEXT', 'SUPPORTS']);
    const [pool, role, model, provider, context, supports] = cells(ollama);
    expect([pool, role, model, provider]).toEqual(['ollama', 'worker', 'qwen3:8b', 'ollama']);
    expect(context).toMatch(/^8192 \(detected: num_ctx at \d{4}-\d\d-\d\dT\S+Z\)$/);
    expect(supports).toBe(
      'params temperature,top_p,max_tokens,seed,stop; response_format json_schema,json_object; stream usage yes; tool_choice no; reasoning reasoning,think_tags',
    );
    expect(cells(openai).slice(0, 5)).toEqual(['openai-main', 'planner', 'gpt-4o-mini', 'openai', '128000 (configured)']);
    expect(rest).toEqual([]);
    // The record that does not read is named, not shown, and does not fail the command.
    expect(stderr.text()).toMatch(/^hermes llm status: left out profile\.broken\.worker: /);
  });

  it('lists each pool with its servers in --json, a pool no call has used yet with its servers only', async () => {
    const { code, stdout } = await hermes({ HERMES_SUBJECT_PREFIX: prefix }, 'llm', 'status', '--json');

    expect(code).toBe(0);
    const pools = JSON.parse(stdout.text()) as { pool: string; capacity?: number; servers: { role: string; context: unknown }[] }[];
    expect(pools.map((p) => p.pool)).toEqual(['ollama', 'openai-main']);
    expect(pools[0]).toMatchObject({ capacity: 2, servers: [{ role: 'worker', context: { tokens: 8192, source: 'detected', detected_from: 'num_ctx' } }] });
    expect(pools[1]).toEqual({
      pool: 'openai-main',
      servers: [expect.objectContaining({ role: 'planner', context: { tokens: 128000, source: 'configured' } })],
    });
  });
});

describe('hermes llm capacity', () => {
  it("changes a pool's capacity for the whole cluster and prints its new status", async () => {
    const { code, stdout } = await cli('llm', 'capacity', 'alpha', '5');

    expect(code).toBe(0);
    const [header, row] = stdout.lines();
    expect(cells(header)[0]).toBe('POOL');
    expect(cells(row)).toEqual(['alpha', '5 (configured 2)', '1', '0', '-', '-']);
    const status = (await readPoolStatus(await bus.kv('llmSemaphore'))).find((p) => p.pool === 'alpha');
    expect(status).toMatchObject({ capacity: 5, configured_capacity: 2 });
    // The semaphore now grants up to the new capacity: four more besides the one held.
    const permits = await Promise.all([1, 2, 3, 4].map(() => sem.acquire('alpha', { timeoutMs: 2000 })));
    await Promise.all(permits.map((p) => p.release()));

    const json = await cli('llm', 'capacity', 'alpha', '2', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout.text())).toMatchObject({ pool: 'alpha', capacity: 2, configured_capacity: 2 });
  });

  it('exits 1 naming the known pools when the pool does not exist', async () => {
    const { code, stdout, stderr } = await cli('llm', 'capacity', 'gamma', '3');

    expect(code).toBe(1);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toBe('hermes llm capacity: no pool named "gamma" (known pools: alpha, beta)\n');
  });

  it('exits 2 with the usage for a capacity that is not a whole number, or missing arguments', async () => {
    for (const argv of [['alpha', 'lots'], ['alpha', '1.5'], ['alpha', '-1'], ['alpha'], ['alpha', '1', '2']]) {
      const { code, stderr } = await cli('llm', 'capacity', ...argv);
      expect(code, argv.join(' ')).toBe(2);
      expect(stderr.text()).toContain('usage: hermes llm capacity <pool> <n> [options]');
    }
    const notNumber = await cli('llm', 'capacity', 'alpha', 'lots');
    expect(notNumber.stderr.text()).toContain('<n> must be a whole number >= 0 (got "lots")');
  });
});

describe('hermes llm', () => {
  it('lists its subcommands when none is named, and in the top-level help', async () => {
    const bare = await cli('llm');
    expect(bare.code).toBe(2);
    expect(bare.stderr.text()).toContain('hermes llm: name a subcommand');
    expect(bare.stderr.text()).toMatch(/^ {2}llm status +show the LLM pools/m);
    expect(bare.stderr.text()).toMatch(/^ {2}llm capacity <pool> <n> +change a pool's capacity/m);

    const help = await cli('--help');
    expect(help.stdout.text()).toMatch(/^ {2}llm status /m);
    const statusHelp = await cli('llm', 'status', '--help');
    expect(statusHelp.stdout.text()).toContain('--json');
    expect((await cli('llm', 'status', 'extra')).code).toBe(2);
  });
});

describe('hermes llm status and the runtimes behind a pool', () => {
  const record = (instance: string, concurrency: number, expiresInMs: number) =>
    JSON.stringify({
      v: 1,
      pool: 'alpha',
      instance,
      concurrency,
      reported_at: new Date().toISOString(),
      expires_at: new Date(Date.now() + expiresInMs).toISOString(),
    });

  it('warns when the live runtimes run fewer jobs at once than the capacity, counting no replica past its expiry', async () => {
    const kv = await bus.kv('llmSemaphore');
    // A live replica of RUNTIME_CONCURRENCY 1, and a dead one (its record expired) that would have covered the cap.
    await kv.put('runner.alpha.live-1', record('live-1', 1, 60_000));
    await kv.put('runner.alpha.dead-1', record('dead-1', 5, -1000));
    try {
      const short = await cli('llm', 'status');
      expect(short.stdout.lines()).toContain(
        'warning: pool alpha: capacity 2 cannot be reached: 1 runtime run at most 1 jobs at once (RUNTIME_CONCURRENCY summed); raise RUNTIME_CONCURRENCY or add runtime replicas',
      );
      const json = JSON.parse((await cli('llm', 'status', '--json')).stdout.text()) as { pool: string; runtimes?: unknown; warning?: string }[];
      expect(json.find((p) => p.pool === 'alpha')).toMatchObject({ runtimes: { replicas: 1, concurrency: 1 }, warning: expect.stringMatching(/^capacity 2/) });
      expect(json.find((p) => p.pool === 'beta')?.warning).toBeUndefined();

      // A second live replica reaches the cap of 2: no warning.
      await kv.put('runner.alpha.live-2', record('live-2', 1, 60_000));
      expect((await cli('llm', 'status')).stdout.text()).not.toContain('warning:');
    } finally {
      for (const key of ['runner.alpha.live-1', 'runner.alpha.dead-1', 'runner.alpha.live-2']) await kv.delete(key);
    }
  });
});
