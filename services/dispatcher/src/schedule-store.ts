import { createHash } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import { decodeStored, ownerOf, Schedule, type Owner } from '@hermes/contracts';
import { casUpdate, isCasConflict } from '@hermes/bus';

/**
 * Schedules in their bucket, one key per (owner, schedule id): ids are the owner's own, so two
 * users (or teams) may both have a schedule `daily`. Every change is a compare-and-set, as for tasks.
 */
export class ScheduleStore {
  constructor(readonly kv: KV) {}

  static keyOf(owner: Owner, scheduleId: string): string {
    return `s_${createHash('sha256')
      .update(JSON.stringify([owner.team, owner.user_id, scheduleId]))
      .digest('hex')
      .slice(0, 40)}`;
  }

  async get(owner: Owner, scheduleId: string): Promise<Schedule | undefined> {
    const entry = await this.kv.get(ScheduleStore.keyOf(owner, scheduleId));
    return entry && isLive(entry) ? decodeSchedule(entry) : undefined;
  }

  /** Creates the schedule, or answers the one already stored under its key. */
  async createOrGet(s: Schedule): Promise<{ schedule: Schedule; created: boolean }> {
    const key = ScheduleStore.keyOf(ownerOf(s), s.schedule_id);
    try {
      await this.kv.create(key, JSON.stringify(s));
      return { schedule: s, created: true };
    } catch (err) {
      if (!isCasConflict(err)) throw err;
      const existing = await this.get(ownerOf(s), s.schedule_id);
      if (!existing) throw err;
      return { schedule: existing, created: false };
    }
  }

  /** Applies `change` with compare-and-set (re-read on conflict); undefined when the schedule is gone. */
  async update(owner: Owner, scheduleId: string, change: (s: Schedule) => Schedule | undefined): Promise<Schedule | undefined> {
    const outcome = await casUpdate<Schedule>(this.kv, ScheduleStore.keyOf(owner, scheduleId), change, { decode: decodeSchedule });
    return outcome.status === 'missing' ? undefined : outcome.value;
  }

  async delete(owner: Owner, scheduleId: string): Promise<boolean> {
    const key = ScheduleStore.keyOf(owner, scheduleId);
    const entry = await this.kv.get(key);
    if (!entry || !isLive(entry)) return false;
    await this.kv.delete(key);
    return true;
  }

  /** Every stored schedule (a scan: for listing; the scheduler keeps a watch instead). */
  async all(): Promise<Schedule[]> {
    const out: Schedule[] = [];
    for await (const key of await this.kv.keys()) {
      const entry = await this.kv.get(key);
      if (entry && isLive(entry)) out.push(decodeSchedule(entry));
    }
    return out;
  }
}

const isLive = (e: KvEntry) => e.operation === 'PUT' && e.length > 0;

/** A stored schedule checked against its contract (StoredStateError `corrupt_state` otherwise). */
export const decodeSchedule = (entry: KvEntry): Schedule => decodeStored(Schedule, entry);
