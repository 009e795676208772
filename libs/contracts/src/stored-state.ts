import type { Static, TSchema } from '@sinclair/typebox';
import type { ValidationIssue, WireError } from './schemas/common.js';
import { wireError } from './errors.js';
import { HermesError } from './hermes-error.js';
import { validate } from './validate.js';

/** Where a record is kept: a KV entry has both (`entry.bucket`, `entry.key`). */
export interface StoredAt {
  bucket: string;
  key: string;
}

/**
 * A stored record does not match its schema (or is not JSON): written by a bug, by hand, or by a
 * version of the code that changed the shape without a new `v`. Not retryable: reading it again
 * gives the same bytes. The reader decides what that means for its work.
 */
export class StoredStateError extends HermesError {
  readonly retryable = false;
  readonly bucket: string;
  readonly key: string;

  constructor(
    readonly record: string,
    at: StoredAt,
    readonly issues: readonly ValidationIssue[],
    options?: { cause?: unknown },
  ) {
    super('corrupt_state', `${record} at ${at.bucket}/${at.key} is unreadable: ${issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`, options);
    this.bucket = at.bucket;
    this.key = at.key;
  }

  /** As it crosses the bus: the record's place and what is wrong with it, never its content. */
  toWire(): WireError {
    return wireError('corrupt_state', this.message, { record: this.record, bucket: this.bucket, key: this.key, issues: this.issues });
  }
}

/**
 * Parses and validates a record read from a bucket: the value as the schema types it, or a
 * StoredStateError naming the bucket, the key and every issue (instead of a cast that fails three
 * calls later).
 */
export function decodeStored<S extends TSchema>(schema: S, entry: StoredAt & { string(): string }): Static<S> {
  const record = schema.title ?? 'record';
  let value: unknown;
  try {
    value = JSON.parse(entry.string());
  } catch (err) {
    throw new StoredStateError(record, entry, [{ path: '', message: `is not JSON (${(err as Error).message})` }], { cause: err });
  }
  const checked = validate(schema, value);
  if (!checked.ok) throw new StoredStateError(record, entry, checked.issues);
  return checked.value;
}
