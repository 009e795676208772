import type { PoolStatus } from '@hermes/semaphore';
import { formatTable } from './text-table.js';

const HEADERS = ['POOL', 'CAPACITY', 'IN USE', 'WAITERS', 'BACK-OFF', 'TOKENS'] as const;

/** LLM pools as an aligned table, for `hermes llm status` and `hermes llm capacity`. */
export function formatPoolTable(pools: readonly PoolStatus[]): string {
  const rows = pools.map((p) => [
    p.pool,
    p.capacity === p.configured_capacity ? String(p.capacity) : `${p.capacity} (configured ${p.configured_capacity})`,
    String(p.in_use),
    String(p.waiters),
    p.backoff_until === null ? '-' : `until ${p.backoff_until}${p.backoff_reason ? ` (${p.backoff_reason})` : ''}`,
    p.tpm === null ? '-' : `${p.tokens_available ?? 0}/${p.tpm} per min`,
  ]);
  return formatTable([[...HEADERS], ...rows]);
}
