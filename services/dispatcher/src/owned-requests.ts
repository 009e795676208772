import { ownerOf, wireError, type Owner } from '@hermes/contracts';
import { ReplyError } from '@hermes/bus';
import type { OwnedRecord, OwnedStore } from './owned-store.js';

/** What the owned requests call a record in their errors (`no schedule x`, `trigger_id`). */
export interface OwnedKind<T> {
  readonly name: 'schedule' | 'trigger';
  idOf(record: T): string;
  /** What makes two specs the same record (a create repeated with its id is answered, not refused). */
  specOf(record: T): string;
  createdAt(record: T): string;
}

export const notFound = (kind: OwnedKind<never>['name'], id: string) => new ReplyError(wireError('not_found', `no ${kind} ${id}`, { [`${kind}_id`]: id }));

/** The owner's record, or `not_found`. */
export async function ownedOrNotFound<T extends OwnedRecord>(store: OwnedStore<T>, kind: OwnedKind<T>, owner: Owner, id: string): Promise<T> {
  return (await store.get(owner, id)) ?? Promise.reject(notFound(kind.name, id));
}

/** Creates `wanted`, answers the stored one with the same spec, refuses another spec under the id (`duplicate_conflict`). */
export async function createOwned<T extends OwnedRecord>(store: OwnedStore<T>, kind: OwnedKind<T>, wanted: T): Promise<T> {
  const { record, created } = await store.createOrGet(wanted);
  const id = kind.idOf(wanted);
  if (!created && kind.specOf(record) !== kind.specOf(wanted)) {
    throw new ReplyError(
      wireError('duplicate_conflict', `${kind.name} ${id} exists with another spec; delete it first or use a new id`, { [`${kind.name}_id`]: id }),
    );
  }
  return record;
}

/** A team's records (user_id null: every user's), oldest first. */
export async function listOwned<T extends OwnedRecord>(
  store: OwnedStore<T>,
  kind: OwnedKind<T>,
  req: { team?: string; user_id: string | null },
  filter?: (team: string) => string,
): Promise<T[]> {
  const team = ownerOf({ user_id: '', ...(req.team ? { team: req.team } : {}) }).team;
  const all = await store.all(filter?.(team));
  const mine = all.filter((r) => ownerOf(r).team === team && (req.user_id === null || r.user_id === req.user_id));
  const at = (r: T) => kind.createdAt(r);
  return mine.sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : kind.idOf(a).localeCompare(kind.idOf(b))));
}
