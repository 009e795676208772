import { createHash } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import { ownerOf, type Owner } from '@hermes/contracts';
import { casUpdate, isCasConflict } from '@hermes/bus';

/** A record one owner (team and user) keeps under an id of their own: a schedule, a trigger. */
export interface OwnedRecord {
  team?: string;
  user_id: string;
}

export interface OwnedStoreOptions<T> {
  /** The bucket key of an owner's record (ids are the owner's own: two users may both have `daily`). */
  keyOf(owner: Owner, id: string): string;
  idOf(record: T): string;
  /** Checks a stored entry against its contract (StoredStateError `corrupt_state` otherwise). */
  decode(entry: KvEntry): T;
}

/** A hash of owner and id that is one KV key token whatever the id holds. */
export const ownedKeyHash = (owner: Owner, id: string): string =>
  createHash('sha256')
    .update(JSON.stringify([owner.team, owner.user_id, id]))
    .digest('hex')
    .slice(0, 40);

/** Owned records in their bucket, one key per (owner, id); every change is a compare-and-set, as for tasks. */
export class OwnedStore<T extends OwnedRecord> {
  constructor(
    readonly kv: KV,
    private readonly o: OwnedStoreOptions<T>,
  ) {}

  async get(owner: Owner, id: string): Promise<T | undefined> {
    const entry = await this.kv.get(this.o.keyOf(owner, id));
    return entry && isLive(entry) ? this.o.decode(entry) : undefined;
  }

  /** Creates the record, or answers the one already stored under its key. */
  async createOrGet(r: T): Promise<{ record: T; created: boolean }> {
    const id = this.o.idOf(r);
    try {
      await this.kv.create(this.o.keyOf(ownerOf(r), id), JSON.stringify(r));
      return { record: r, created: true };
    } catch (err) {
      if (!isCasConflict(err)) throw err;
      const existing = await this.get(ownerOf(r), id);
      if (!existing) throw err;
      return { record: existing, created: false };
    }
  }

  /** Applies `change` with compare-and-set (re-read on conflict); undefined when the record is gone. */
  async update(owner: Owner, id: string, change: (r: T) => T | undefined): Promise<T | undefined> {
    const outcome = await casUpdate<T>(this.kv, this.o.keyOf(owner, id), change, { decode: (e) => this.o.decode(e) });
    return outcome.status === 'missing' ? undefined : outcome.value;
  }

  async delete(owner: Owner, id: string): Promise<boolean> {
    const key = this.o.keyOf(owner, id);
    const entry = await this.kv.get(key);
    if (!entry || !isLive(entry)) return false;
    await this.kv.delete(key);
    return true;
  }

  /** Every stored record under `filter` (a KV key filter; default all): a scan, for listing. */
  async all(filter?: string): Promise<T[]> {
    const out: T[] = [];
    for await (const key of await this.kv.keys(filter)) {
      const entry = await this.kv.get(key);
      if (entry && isLive(entry)) out.push(this.o.decode(entry));
    }
    return out;
  }
}

/** Whether a KV entry holds a record (not a delete or purge marker). */
export const isLive = (e: KvEntry) => e.operation === 'PUT' && e.length > 0;
