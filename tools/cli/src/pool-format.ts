import type { StoredPoolProfile } from '@hermes/contracts';
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

/** What the live runtime replicas of a pool can run at once: their number and RUNTIME_CONCURRENCY summed. */
export interface PoolReach {
  replicas: number;
  concurrency: number;
}

/**
 * A warning for each pool whose live runtimes together run fewer jobs at once than its capacity:
 * each job makes one LLM call at a time, so the cap is then out of reach and raising it does
 * nothing. A pool no runtime reported on (one only the memory service calls) gets none.
 */
export function reachWarnings(pools: readonly PoolStatus[], reach: ReadonlyMap<string, PoolReach>): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of pools) {
    const r = reach.get(p.pool);
    if (!r || r.concurrency >= p.capacity) continue;
    const runtimes = r.replicas === 1 ? '1 runtime' : `${r.replicas} runtimes`;
    out.set(
      p.pool,
      `capacity ${p.capacity} cannot be reached: ${runtimes} run at most ${r.concurrency} jobs at once (RUNTIME_CONCURRENCY summed); raise RUNTIME_CONCURRENCY or add runtime replicas`,
    );
  }
  return out;
}

const SERVER_HEADERS = ['POOL', 'ROLE', 'MODEL', 'PROVIDER', 'CONTEXT', 'SUPPORTS'] as const;

/** Each role's server as its service reported it: profile, window (configured or detected, from what), and what it takes. */
export function formatServerTable(profiles: readonly StoredPoolProfile[]): string {
  const rows = profiles.map((p) => [
    p.pool,
    p.role,
    p.model,
    p.provider === p.provider_name ? p.provider : `${p.provider} (${p.provider_name})`,
    contextCell(p.context),
    supportsCell(p.supports),
  ]);
  return formatTable([[...SERVER_HEADERS], ...rows]);
}

function contextCell(c: StoredPoolProfile['context']): string {
  if (c.tokens === null) return 'unknown (MODEL_CONTEXT_TOKENS)';
  if (c.source === 'configured') return `${c.tokens} (configured)`;
  return `${c.tokens} (detected: ${c.detected_from ?? '?'}${c.detected_at ? ` at ${c.detected_at}` : ''})`;
}

function supportsCell(s: StoredPoolProfile['supports']): string {
  const list = (xs: readonly string[]) => (xs.length ? xs.join(',') : 'none');
  return [
    `params ${list(s.params)}`,
    `response_format ${list(s.response_format)}`,
    `stream usage ${s.stream_usage ? 'yes' : 'no'}`,
    `tool_choice ${s.tool_choice ? 'yes' : 'no'}`,
    `reasoning ${list(s.reasoning)}`,
  ].join('; ');
}
