import type { Bus } from '@hermes/bus';
import { decodeStored, StoredPoolProfile, StoredRunnerCapacity, StoredStateError } from '@hermes/contracts';
import { readPoolStatus, setPoolCapacity } from '@hermes/semaphore';
import { CliError, EXIT, UsageError, writeLine, type Command, type CommandContext } from './command.js';
import { formatPoolTable, formatServerTable, reachWarnings, type PoolReach } from './pool-format.js';

type SemaphoreKv = Awaited<ReturnType<Bus['kv']>>;

/**
 * The profile records the services wrote at start (`profile.<pool>.<role>`: provider profile,
 * what it supports, the model's window and whether it was configured or detected), by pool and
 * role. A record that does not read is reported on `stderr` and left out.
 */
async function readPoolProfiles(kv: SemaphoreKv, stderr: CommandContext['stderr']): Promise<StoredPoolProfile[]> {
  const out: StoredPoolProfile[] = [];
  for await (const key of await kv.keys('profile.>')) {
    const entry = await kv.get(key);
    if (!entry || entry.operation !== 'PUT') continue;
    try {
      out.push(decodeStored(StoredPoolProfile, entry));
    } catch (err) {
      if (!(err instanceof StoredStateError)) throw err;
      writeLine(stderr, `hermes llm status: left out ${key}: ${err.message}`);
    }
  }
  return out.sort((a, b) => a.pool.localeCompare(b.pool) || a.role.localeCompare(b.role));
}

/**
 * What the live runtime replicas can run at once per pool (their RUNTIME_CONCURRENCY summed), from
 * the records each keeps in the semaphore bucket; one past its `expires_at` is a replica gone.
 */
async function readPoolReach(kv: SemaphoreKv, now = Date.now()): Promise<Map<string, PoolReach>> {
  const reach = new Map<string, PoolReach>();
  for await (const key of await kv.keys('runner.>')) {
    const entry = await kv.get(key);
    if (!entry || entry.operation !== 'PUT') continue;
    let r: StoredRunnerCapacity;
    try {
      r = decodeStored(StoredRunnerCapacity, entry);
    } catch (err) {
      if (err instanceof StoredStateError) continue;
      throw err;
    }
    if (Date.parse(r.expires_at) <= now) continue;
    const sum = reach.get(r.pool) ?? { replicas: 0, concurrency: 0 };
    reach.set(r.pool, { replicas: sum.replicas + 1, concurrency: sum.concurrency + r.concurrency });
  }
  return reach;
}

/** The semaphore bucket of the prefix the CLI is connected with. */
async function semaphoreBucket(ctx: CommandContext): Promise<{ kv: SemaphoreKv; name: string }> {
  const bus = await ctx.bus();
  const name = bus.subjects.buckets.llmSemaphore;
  try {
    return { kv: await bus.kv('llmSemaphore'), name };
  } catch (err) {
    throw new CliError(`cannot open the KV bucket ${name} (is JetStream enabled on this NATS?): ${(err as Error).message}`, EXIT.failed, { cause: err });
  }
}

/** `hermes llm status`: every LLM pool's capacity, permits in use, queue and back-off, and each role's server: profile, window, what it supports. */
export const llmStatusCommand: Command = {
  path: ['llm', 'status'],
  summary: "show the LLM pools: capacity, calls in flight, waiters, back-off, token budget, and each role's server (provider, context window, supports)",
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: {
    json: { type: 'boolean', description: 'print the pools as a JSON array' },
  },
  async execute({ values }, ctx) {
    const { kv, name } = await semaphoreBucket(ctx);
    const [pools, profiles, reach] = await Promise.all([readPoolStatus(kv), readPoolProfiles(kv, ctx.stderr), readPoolReach(kv)]);
    const warnings = reachWarnings(pools, reach);
    if (values.json === true) {
      // Each pool with its servers; a pool only known from its profiles (no call yet) has just those.
      const names = [...new Set([...pools.map((p) => p.pool), ...profiles.map((p) => p.pool)])].sort();
      const servers = (pool: string) => profiles.filter((p) => p.pool === pool);
      writeLine(
        ctx.stdout,
        JSON.stringify(
          names.map((pool) => ({
            ...(pools.find((p) => p.pool === pool) ?? { pool }),
            ...(reach.has(pool) ? { runtimes: reach.get(pool) } : {}),
            ...(warnings.has(pool) ? { warning: warnings.get(pool) } : {}),
            servers: servers(pool),
          })),
          null,
          2,
        ),
      );
      return EXIT.ok;
    }
    if (pools.length === 0) writeLine(ctx.stdout, `no pool has been used yet (a pool appears in ${name} with its first LLM call)`);
    else writeLine(ctx.stdout, formatPoolTable(pools));
    for (const [pool, warning] of warnings) writeLine(ctx.stdout, `warning: pool ${pool}: ${warning}`);
    if (profiles.length > 0) writeLine(ctx.stdout, `\n${formatServerTable(profiles)}`);
    return EXIT.ok;
  },
};

/** `hermes llm capacity <pool> <n>`: change a pool's capacity while the cluster runs. */
export const llmCapacityCommand: Command = {
  path: ['llm', 'capacity'],
  summary: "change a pool's capacity cluster-wide until its configured value changes",
  args: '<pool> <n>',
  minArgs: 2,
  maxArgs: 2,
  options: {
    json: { type: 'boolean', description: 'print the new status of the pool as JSON' },
  },
  async execute({ values, positionals }, ctx) {
    const [pool = '', n = ''] = positionals;
    if (!/^\d{1,9}$/.test(n)) throw new UsageError(`<n> must be a whole number >= 0 (got "${n}")`);
    const { kv } = await semaphoreBucket(ctx);
    const known = (await readPoolStatus(kv)).map((p) => p.pool);
    if (!known.includes(pool)) {
      const hint = known.length > 0 ? `known pools: ${known.join(', ')}` : 'no pool has been used yet';
      throw new CliError(`no pool named "${pool}" (${hint})`, EXIT.failed);
    }
    const status = await setPoolCapacity(kv, pool, Number(n));
    writeLine(ctx.stdout, values.json === true ? JSON.stringify(status, null, 2) : formatPoolTable([status]));
    return EXIT.ok;
  },
};
