import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { decodeStored, StoredCacheEntry, StoredStateError, type ToolSpec } from '@hermes/contracts';
import type { ToolArguments } from './tool-types.js';

/**
 * Results of idempotent tools (`idempotent` and `cache_ttl_ms`), shared by all replicas through
 * KV. The bucket's max_age bounds every entry; each read also checks the entry's age against the
 * tool's own TTL, so tools with different TTLs share one bucket.
 */
export class ResultCache {
  constructor(
    private readonly kv: KV,
    private readonly o: { maxTtlMs: number; maxBytes: number },
  ) {}

  /** Whether results of this tool may be cached at all. */
  static applies(spec: ToolSpec): boolean {
    return spec.idempotent === true && (spec.cache_ttl_ms ?? 0) > 0;
  }

  async get(spec: ToolSpec, args: ToolArguments, now = Date.now()): Promise<unknown> {
    const entry = await this.kv.get(cacheKey(spec.name, args));
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return undefined;
    let cached: StoredCacheEntry;
    try {
      cached = decodeStored(StoredCacheEntry, entry);
    } catch (err) {
      // Only idempotent tools are cached: an unreadable entry is a miss, and the next put replaces it.
      if (err instanceof StoredStateError) return undefined;
      throw err;
    }
    const ttl = Math.min(spec.cache_ttl_ms ?? 0, this.o.maxTtlMs);
    return now - cached.stored_at < ttl ? cached.result : undefined;
  }

  async put(spec: ToolSpec, args: ToolArguments, result: unknown): Promise<void> {
    const text = JSON.stringify({ v: 1, stored_at: Date.now(), result } satisfies StoredCacheEntry);
    if (Buffer.byteLength(text) > this.o.maxBytes) return;
    await this.kv.put(cacheKey(spec.name, args), text);
  }
}

/** `<tool>.<sha256 of the canonical JSON of the arguments>`: equal arguments in any key order hit. */
export function cacheKey(tool: string, args: ToolArguments): string {
  return `${tool}.${createHash('sha256').update(canonicalJson(args)).digest('hex')}`;
}

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
