import type { KV, KvEntry } from '@nats-io/kv';
import { ownerOf, StoredStateError, type Schedule } from '@hermes/contracts';
import { submitTask, type Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import { decodeSchedule, type ScheduleStore } from './schedule-store.js';
import { dueFirings } from './schedule-clock.js';

/** The CloudEvents source of every task a schedule starts; the event id is `<schedule>@<fire time>`. */
export const SCHEDULE_SOURCE = 'hermes/schedules';

/** The event id of one firing: with the owner's team and SCHEDULE_SOURCE it names the firing's task. */
export const firingId = (s: Pick<Schedule, 'schedule_id'>, at: Date): string => `${s.schedule_id}@${at.toISOString()}`;

export interface SchedulerOptions {
  store: ScheduleStore;
  bus: Bus;
  logger: Logger;
  /** How often this replica looks for due firings (SCHEDULE_TICK_MS). */
  tickMs: number;
  /** How late a firing may be and still be on time (SCHEDULE_GRACE_MS); later ones were missed. */
  graceMs: number;
}

/**
 * Fires schedules. Every dispatcher replica runs one, over the same bucket (followed with a
 * watch), and each may fire the same firing: the task's id comes from the schedule and the fire
 * time, so the submit stream's de-duplication (and the intake's create-if-absent) makes every
 * firing one task however many replicas fire it. The schedule's `fired_through` is then moved on
 * with compare-and-set, after the submission: a replica that dies in between leaves the firing due,
 * and the next tick submits the same task again (dropped as a duplicate), so no firing is lost.
 */
export class Scheduler {
  private readonly schedules = new Map<string, Schedule>();
  private watcher?: Awaited<ReturnType<KV['watch']>>;
  private watching?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;

  constructor(private readonly o: SchedulerOptions) {}

  async start(): Promise<void> {
    const watcher = await this.o.store.kv.watch();
    this.watcher = watcher;
    this.watching = (async () => {
      for await (const entry of watcher) this.apply(entry);
    })().catch((err: unknown) => this.o.logger.error({ err }, 'schedule watch ended'));
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.tick()
        .catch((err: unknown) => this.o.logger.warn({ err }, 'schedule tick failed; the next one tries again'))
        .finally(() => (this.ticking = undefined));
    }, this.o.tickMs);
    this.timer.unref();
  }

  /** Fires what is due at `now`. */
  async tick(now = new Date()): Promise<void> {
    const onTimeMs = this.o.graceMs;
    for (const s of [...this.schedules.values()]) {
      if (!dueFirings(s, now, onTimeMs)) continue;
      await this.fire(s, now, onTimeMs).catch((err: unknown) =>
        this.o.logger.warn({ err, schedule_id: s.schedule_id, team: s.team, user_id: s.user_id }, 'schedule firing failed; the next tick tries again'),
      );
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.watcher?.stop();
    await Promise.all([this.watching, this.ticking]);
  }

  private async fire(seen: Schedule, now: Date, onTimeMs: number): Promise<void> {
    const owner = ownerOf(seen);
    // The watch may lag another replica's write: decide on the stored schedule.
    const s = await this.o.store.get(owner, seen.schedule_id);
    const due = s && dueFirings(s, now, onTimeMs);
    if (!s || !due) return;
    let lastTaskId: string | undefined;
    for (const at of due.fire) {
      const { taskId, duplicate } = await submitTask(
        this.o.bus,
        { ...s.task, user_id: s.user_id },
        { team: owner.team, source: SCHEDULE_SOURCE, id: firingId(s, at) },
      );
      lastTaskId = taskId;
      if (!duplicate)
        this.o.logger.info({ schedule_id: s.schedule_id, team: owner.team, user_id: s.user_id, fire_at: at.toISOString(), task_id: taskId }, 'schedule fired');
    }
    if (due.skipped > 0)
      this.o.logger.warn(
        { schedule_id: s.schedule_id, team: owner.team, user_id: s.user_id, skipped: due.skipped, missed: s.missed },
        "missed firings dropped by the schedule's policy",
      );
    const through = due.through.toISOString();
    await this.o.store.update(owner, s.schedule_id, (cur) => {
      if (cur.fired_through >= through) return undefined;
      const fired = due.fire.length;
      return {
        ...cur,
        fired_through: through,
        firings: cur.firings + fired,
        updated_at: now.toISOString(),
        ...(fired ? { last_fire_at: due.fire.at(-1)!.toISOString(), last_task_id: lastTaskId! } : {}),
      };
    });
  }

  private apply(entry: KvEntry): void {
    if (entry.operation !== 'PUT' || entry.length === 0) {
      this.schedules.delete(entry.key);
      return;
    }
    try {
      this.schedules.set(entry.key, decodeSchedule(entry));
    } catch (err) {
      if (!(err instanceof StoredStateError)) throw err;
      // One unreadable record must not stop every other schedule.
      this.schedules.delete(entry.key);
      this.o.logger.error({ err, key: entry.key, issues: err.issues }, 'unreadable schedule ignored');
    }
  }
}
