import type { KV, KvEntry } from '@nats-io/kv';
import { decodeStored, Trigger, type Owner } from '@hermes/contracts';
import { OwnedStore, ownedKeyHash } from './owned-store.js';

/**
 * Triggers in their bucket, keyed `t.<team>.<hash of owner and id>`: an event of a team is matched
 * against that team's triggers only, read with a key filter at the time the event is handled, so a
 * trigger whose create was answered sees every event handled after it.
 */
export class TriggerStore extends OwnedStore<Trigger> {
  constructor(kv: KV) {
    super(kv, { keyOf: TriggerStore.keyOf, idOf: (t) => t.trigger_id, decode: decodeTrigger });
  }

  static keyOf(owner: Owner, triggerId: string): string {
    return `t.${owner.team}.${ownedKeyHash(owner, triggerId)}`;
  }

  /** The KV key filter of one team's triggers. */
  static teamFilter(team: string): string {
    return `t.${team}.*`;
  }

  ofTeam(team: string): Promise<Trigger[]> {
    return this.all(TriggerStore.teamFilter(team));
  }
}

/** A stored trigger checked against its contract (StoredStateError `corrupt_state` otherwise). */
export const decodeTrigger = (entry: KvEntry): Trigger => decodeStored(Trigger, entry);
