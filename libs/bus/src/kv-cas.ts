import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV, KvEntry } from '@nats-io/kv';
import { BusError } from './bus-errors.js';

/**
 * A KV create or compare-and-set lost against a concurrent write. The server answers both with
 * the JetStream API code 10071 ("wrong last sequence"; `kv.create` on an existing key rethrows
 * it), newer servers also with 10164 when the subject's last sequence is not known yet. Matched
 * by code, not message text, which the server is free to reword.
 */
export function isCasConflict(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** `casUpdate` lost the race `attempts` times in a row: the key is written faster than we can read and write it. */
export class CasRetriesExhaustedError extends BusError {
  constructor(
    readonly key: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super('cas_retries_exhausted', `KV key ${key}: ${attempts} compare-and-set attempts lost to concurrent writers`, options);
  }
}

export interface CasUpdateOptions<T> {
  /** Decodes (and validates) a stored value; what it throws propagates. Default `entry.json()`. */
  decode?: (entry: KvEntry) => T;
  /** Encodes the value to write. Default `JSON.stringify`. */
  encode?: (value: T) => string | Uint8Array;
  /** Reads and writes before giving up with CasRetriesExhaustedError. Default 20. */
  maxAttempts?: number;
}

/** What `casUpdate` did: the key was absent, the change left it as it was, or the new value was written. */
export type CasOutcome<T> = { status: 'missing' } | { status: 'unchanged'; value: T; revision: number } | { status: 'updated'; value: T; revision: number };

/**
 * Reads `key`, applies `change` and writes the result only if nobody wrote in between; on a
 * conflict it reads again and re-applies `change`, which must therefore be pure (no side effects,
 * the same answer for the same input). `change` returns undefined to leave the value as it is.
 * An absent (or deleted) key is not created: the outcome is `missing`.
 */
export async function casUpdate<T>(kv: KV, key: string, change: (current: T) => T | undefined, opts: CasUpdateOptions<T> = {}): Promise<CasOutcome<T>> {
  const decode = opts.decode ?? ((e: KvEntry) => e.json<T>());
  const encode = opts.encode ?? ((v: T) => JSON.stringify(v));
  const attempts = opts.maxAttempts ?? 20;
  let lastConflict: unknown;
  for (let i = 0; i < attempts; i++) {
    const entry = await kv.get(key);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return { status: 'missing' };
    const current = decode(entry);
    const next = change(current);
    if (next === undefined) return { status: 'unchanged', value: current, revision: entry.revision };
    try {
      const revision = await kv.update(key, encode(next), entry.revision);
      return { status: 'updated', value: next, revision };
    } catch (err) {
      if (!isCasConflict(err)) throw err;
      lastConflict = err;
    }
  }
  throw new CasRetriesExhaustedError(key, attempts, { cause: lastConflict });
}
