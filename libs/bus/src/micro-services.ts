import type { TSchema, Static } from '@sinclair/typebox';
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
  const out = await microServiceReplies(bus, subject, MicroServiceStats, opts.waitMs);
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/**
 * Every reply to a services API request (`$SRV.PING`, `$SRV.INFO.<name>`, ...) that arrives within
 * `waitMs` and matches `schema`; the others are skipped. None when nothing answers or the login may not ask.
 */
export async function microServiceReplies<T extends TSchema>(bus: Bus, subject: string, schema: T, waitMs = 500): Promise<Static<T>[]> {
  const out: Static<T>[] = [];
  try {
    const replies = await natsHandles(bus).nc.requestMany(subject, '', { maxWait: waitMs });
    for await (const m of replies) {
      const decoded = decodeJson(m.data);
      const checked = decoded.ok ? validate(schema, decoded.value) : undefined;
      if (checked?.ok) out.push(checked.value as Static<T>);
    }
  } catch {
    // No service at all (no responders), or a login without the right to ask: none.
  }
  return out;
}

/** Requests and errors of a service instance, summed over its endpoints (older clients report them at the top). */
export function microServiceTotals(s: MicroServiceStats): { requests: number; errors: number } {
  if (s.endpoints?.length) {
    return s.endpoints.reduce((t, e) => ({ requests: t.requests + e.num_requests, errors: t.errors + e.num_errors }), { requests: 0, errors: 0 });
  }
  return { requests: s.num_requests ?? 0, errors: s.num_errors ?? 0 };
}
