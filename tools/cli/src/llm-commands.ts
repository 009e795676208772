import type { Bus } from '@hermes/bus';
import { readPoolStatus, setPoolCapacity } from '@hermes/semaphore';
import { CliError, EXIT, UsageError, writeLine, type Command, type CommandContext } from './command.js';
import { formatPoolTable } from './pool-format.js';

/** The semaphore bucket of the prefix the CLI is connected with. */
async function semaphoreBucket(ctx: CommandContext): Promise<{ kv: Awaited<ReturnType<Bus['kv']>>; name: string }> {
  const bus = await ctx.bus();
  const name = bus.subjects.buckets.llmSemaphore;
  try {
    return { kv: await bus.kv('llmSemaphore'), name };
  } catch (err) {
    throw new CliError(`cannot open the KV bucket ${name} (is JetStream enabled on this NATS?): ${(err as Error).message}`, EXIT.failed, { cause: err });
  }
}

/** `hermes llm status`: every LLM pool's capacity, permits in use, queue and back-off. */
export const llmStatusCommand: Command = {
  path: ['llm', 'status'],
  summary: 'show the LLM pools: capacity, calls in flight, waiters, back-off, token budget',
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: {
    json: { type: 'boolean', description: 'print the pools as a JSON array' },
  },
  async execute({ values }, ctx) {
    const { kv, name } = await semaphoreBucket(ctx);
    const pools = await readPoolStatus(kv);
    if (values.json === true) writeLine(ctx.stdout, JSON.stringify(pools, null, 2));
    else if (pools.length === 0) writeLine(ctx.stdout, `no pool has been used yet (a pool appears in ${name} with its first LLM call)`);
    else writeLine(ctx.stdout, formatPoolTable(pools));
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
