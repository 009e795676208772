import type { KV, KvEntry } from '@nats-io/kv';
import { decodeStored, Schedule, type Owner } from '@hermes/contracts';
import { OwnedStore, ownedKeyHash } from './owned-store.js';

/**
 * Schedules in their bucket, one key per (owner, schedule id): ids are the owner's own, so two
 * users (or teams) may both have a schedule `daily`.
 */
export class ScheduleStore extends OwnedStore<Schedule> {
  constructor(kv: KV) {
    super(kv, { keyOf: ScheduleStore.keyOf, idOf: (s) => s.schedule_id, decode: decodeSchedule });
  }

  static keyOf(owner: Owner, scheduleId: string): string {
    return `s_${ownedKeyHash(owner, scheduleId)}`;
  }
}

/** A stored schedule checked against its contract (StoredStateError `corrupt_state` otherwise). */
export const decodeSchedule = (entry: KvEntry): Schedule => decodeStored(Schedule, entry);
