import { createHash } from 'node:crypto';
import { decodeStored, StoredCallRecord, toolCallIdFor } from '@hermes/contracts';
import { isCasConflict } from '@hermes/bus';
import type { KV } from '@nats-io/kv';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';

/** One tool call in KV (bucket `buckets.toolCalls`, key from the idempotency key); its schema is `StoredCallRecord` in the contracts. */
export type CallRecord = StoredCallRecord;
export type { CallOrigin, CallState, ApprovalState } from '@hermes/contracts';

/** The version this code writes (see `StoredCallRecord`). */
const RECORD_VERSION = 1;

export interface StoredRecord {
  record: CallRecord;
  revision: number;
}

/** The KV key (also the call id) for an idempotency key; see `toolCallIdFor` in the contracts. */
export function recordKeyFor(idempotencyKey: string): string {
  return toolCallIdFor(idempotencyKey);
}

/** Identifies what a request asks for, so that a resend replays and a different call does not. */
export function callHashOf(tool: string, rawArguments: string): string {
  return createHash('sha256').update(tool).update('\u0000').update(rawArguments).digest('base64url');
}

/** Whether a string could be a record key (so an approval for anything else is simply unknown). */
export function isRecordKey(key: string): boolean {
  return /^[A-Za-z0-9_=-]+(\.[A-Za-z0-9_=-]+)*$/.test(key) && key.length <= 256;
}

/** Reads and writes call records; every write is a create-if-absent or a compare-and-set. */
export class CallRecordStore {
  constructor(
    private readonly kv: KV,
    /** Largest value the server accepts; oversized full results are dropped to fit. */
    private readonly maxBytes: number,
    /** For `writeUnacknowledged`: the connection and the bucket's subject prefix (`$KV.<bucket>.`). */
    private readonly direct: { nc: NatsConnection; subjectPrefix: string },
  ) {}

  /** The record at `key`; throws StoredStateError (`corrupt_state`) when it fails its schema. */
  async get(key: string): Promise<StoredRecord | undefined> {
    const entry = await this.kv.get(key);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return undefined;
    return { record: decodeStored(StoredCallRecord, entry), revision: entry.revision };
  }

  /**
   * The records of one task's calls whose keys are plain (`<task>.<subtask>.<step>.<index>`, as the
   * runtime's idempotency keys become; a key that had to be hashed cannot be found by its task).
   * A record that fails its schema throws, as `get` does.
   */
  async ofTask(taskId: string): Promise<CallRecord[]> {
    const prefix = recordKeyFor(`${taskId}:x`);
    if (prefix.startsWith('_h.')) return [];
    const keys: string[] = [];
    for await (const key of await this.kv.keys(`${prefix.slice(0, -1)}>`)) keys.push(key);
    const records = await Promise.all(keys.map((key) => this.get(key)));
    return records.flatMap((r) => (r ? [r.record] : []));
  }

  /** Creates the record; undefined when it already exists (another request or replica was first). */
  async create(key: string, record: CallRecord): Promise<number | undefined> {
    try {
      return await this.kv.create(key, this.encode(record));
    } catch (err) {
      if (isCasConflict(err)) return undefined;
      throw err;
    }
  }

  /** Creates the record, or replaces it at `expected` when given; undefined when someone wrote first. */
  write(key: string, record: CallRecord, expected: number | undefined): Promise<number | undefined> {
    return expected === undefined ? this.create(key, record) : this.replace(key, record, expected);
  }

  /**
   * `write` without waiting for JetStream's ack: the same create-if-absent (or compare-and-set at
   * `expected`), checked by the server, whose outcome nobody hears. Only for records whose loss or
   * refusal is harmless, those of side-effect-free calls: without the record a resumed runtime's
   * call runs once more, and a record already there stands. Saves the ack and the wake-up it costs.
   */
  writeUnacknowledged(key: string, record: CallRecord, expected: number | undefined): void {
    const h = natsHeaders();
    h.set('Nats-Expected-Last-Subject-Sequence', String(expected ?? 0));
    this.direct.nc.publish(
      `${this.direct.subjectPrefix}${key}`,
      this.encode(expected === undefined ? record : { ...record, updated_at: new Date().toISOString() }),
      { headers: h },
    );
  }

  /** Replaces the record if it is still at `revision`; undefined when someone wrote in between. */
  async replace(key: string, record: CallRecord, revision: number): Promise<number | undefined> {
    try {
      return await this.kv.update(key, this.encode({ ...record, updated_at: new Date().toISOString() }), revision);
    } catch (err) {
      if (isCasConflict(err)) return undefined;
      throw err;
    }
  }

  private encode(unversioned: CallRecord): string {
    const record = { ...unversioned, v: RECORD_VERSION } as const;
    let text = JSON.stringify(record);
    if (Buffer.byteLength(text) > this.maxBytes && record.full_result !== undefined) {
      const { full_result: _dropped, ...rest } = record;
      text = JSON.stringify({ ...rest, full_result_dropped: 'the full result was larger than a KV value may be' });
    }
    return text;
  }
}
