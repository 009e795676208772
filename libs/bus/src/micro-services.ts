import { MicroServiceStats, validate } from '@hermes/contracts';
import { natsHandles, type Bus } from './bus.js';
import { decodeJson } from './codec.js';

/** The NATS services API's control subjects: `$SRV.<verb>` reaches every service, `$SRV.<verb>.<name>` one. */
const SRV = '$SRV';

/**
 * The `$SRV.STATS` replies of the NATS micro services on the bus (every instance answers on its
 * own) that arrive within `waitMs`, by name and id. A reply that is not a stats reply is skipped:
 * any client may run a service, and one bad reply must not hide the others.
 */
export async function microServiceStats(bus: Bus, opts: { name?: string; waitMs?: number } = {}): Promise<MicroServiceStats[]> {
  const subject = opts.name ? `${SRV}.STATS.${opts.name}` : `${SRV}.STATS`;
  const out: MicroServiceStats[] = [];
  try {
    const replies = await natsHandles(bus).nc.requestMany(subject, '', { maxWait: opts.waitMs ?? 500 });
    for await (const m of replies) {
      const decoded = decodeJson(m.data);
      const checked = decoded.ok ? validate(MicroServiceStats, decoded.value) : undefined;
      if (checked?.ok) out.push(checked.value);
    }
  } catch {
    // No service at all (no responders), or a login without the right to ask: none to show.
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/** Requests and errors of a service instance, summed over its endpoints (older clients report them at the top). */
export function microServiceTotals(s: MicroServiceStats): { requests: number; errors: number } {
  if (s.endpoints?.length) {
    return s.endpoints.reduce((t, e) => ({ requests: t.requests + e.num_requests, errors: t.errors + e.num_errors }), { requests: 0, errors: 0 });
  }
  return { requests: s.num_requests ?? 0, errors: s.num_errors ?? 0 };
}
