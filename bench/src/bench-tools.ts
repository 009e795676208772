import { connect } from '@nats-io/transport-node';
import { request, type Bus } from '@hermes/bus';
import { contracts } from '@hermes/contracts';
import { defineTool, hostToolProvider, type ToolProvider } from '@hermes/tool-sdk';

/** What `bench_record` returns: the entry, and `pad` bytes of padding (a large tool result when asked for). */
export function recordEntry(args: Record<string, unknown>): { recorded: string; padding?: string } {
  const pad = typeof args.pad === 'number' ? args.pad : 0;
  return { recorded: String(args.entry), ...(pad ? { padding: 'x'.repeat(pad) } : {}) };
}

/**
 * The bench's side-effecting tool, hosted with the tool SDK on its own NATS connection: it is not
 * idempotent, so each call takes the path users' tools with effects take (an acknowledged
 * `running` record, the run, `done`, and the turn's checkpoint stored before the call goes out).
 * `runs` counts the handler's runs, the side effect.
 */
export async function hostBenchTools(o: { natsUrl: string; bus: Bus }): Promise<{ runs: () => number; stop: () => Promise<void> }> {
  let runs = 0;
  const tool = defineTool(
    {
      name: 'bench_record',
      description: 'Records one entry (a side effect) and returns it, with padding when asked for.',
      parameters: {
        type: 'object',
        properties: { entry: { type: 'string', maxLength: 200 }, pad: { type: 'integer', minimum: 0, maximum: 60_000 } },
        required: ['entry'],
        additionalProperties: false,
      },
      idempotent: false,
      timeout_ms: 10_000,
    },
    async (args: Record<string, unknown>) => {
      runs++;
      return recordEntry(args);
    },
  );
  const nc = await connect({ servers: o.natsUrl, name: 'bench-tools' });
  let provider: ToolProvider | undefined;
  try {
    provider = await hostToolProvider({ nc, provider: 'bench-tools', tools: [tool] });
    // The toolbus lists the tool once a discovery round found the provider (every 10 s by
    // default, TOOL_SRV_DISCOVERY_INTERVAL_MS): three rounds at most.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = await request(o.bus, contracts.toolsList, { user_id: 'bench', roles: ['user'] });
      if (listed.tools.some((t) => t.name === 'bench_record')) break;
      if (Date.now() > deadline) throw new Error('the toolbus never listed bench_record (no discovery round found bench-tools in 30 s)');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await provider?.stop(1000);
    await nc.close();
    throw err;
  }
  return {
    runs: () => runs,
    stop: async () => {
      await provider?.stop(3000);
      await nc.close();
    },
  };
}
