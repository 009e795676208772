import { randomUUID } from 'node:crypto';
import { contracts, ownerOf, type Owner, type Schedule, type ScheduleView } from '@hermes/contracts';
import { ReplyError, serve, type Bus } from '@hermes/bus';
import type { ScheduleStore } from './schedule-store.js';
import { createOwned, listOwned, notFound, ownedOrNotFound, type OwnedKind } from './owned-requests.js';
import { nextFireAt, scheduleProblem } from './schedule-clock.js';

/** A schedule as answered, with its next fire time. */
export function scheduleView(s: Schedule, now = new Date()): ScheduleView {
  const next = nextFireAt(s, new Date(Math.max(now.getTime(), Date.parse(s.fired_through))));
  return { ...s, ...(next ? { next_fire_at: next.toISOString() } : {}) };
}

const SCHEDULE: OwnedKind<Schedule> = {
  name: 'schedule',
  idOf: (s) => s.schedule_id,
  specOf: (s) => JSON.stringify([s.cron, s.timezone, s.missed, s.task]),
  createdAt: (s) => s.created_at,
};

/** Answers the schedule requests: every one is about one owner's schedules (list: or a team's). */
export function serveScheduleRequests(bus: Bus, store: ScheduleStore): ReturnType<typeof serve>[] {
  const owned = (owner: Owner, id: string) => ownedOrNotFound(store, SCHEDULE, owner, id);
  return [
    serve(bus, contracts.scheduleCreate, async (req) => {
      const owner = ownerOf(req);
      const timezone = req.spec.timezone ?? 'UTC';
      const problem = scheduleProblem(req.spec.cron, timezone);
      if (problem) throw new ReplyError(problem);
      const now = new Date().toISOString();
      const wanted: Schedule = {
        v: 1,
        schedule_id: req.spec.schedule_id ?? `s-${randomUUID()}`,
        team: owner.team,
        user_id: owner.user_id,
        cron: req.spec.cron,
        timezone,
        missed: req.spec.missed ?? 'run_once',
        task: req.spec.task,
        paused: false,
        created_at: now,
        updated_at: now,
        fired_through: now,
        firings: 0,
      };
      return scheduleView(await createOwned(store, SCHEDULE, wanted));
    }),
    serve(bus, contracts.scheduleGet, async (req) => scheduleView(await owned(ownerOf(req), req.schedule_id))),
    serve(bus, contracts.scheduleList, async (req) => ({ schedules: (await listOwned(store, SCHEDULE, req)).map((s) => scheduleView(s)) })),
    serve(bus, contracts.scheduleUpdate, async (req) => {
      const now = new Date().toISOString();
      const updated = await store.update(ownerOf(req), req.schedule_id, (s) => {
        if (s.paused === req.paused) return undefined;
        // Resuming counts from now: what fell due while paused was asked not to run.
        return { ...s, paused: req.paused, updated_at: now, ...(req.paused ? {} : { fired_through: now }) };
      });
      if (!updated) throw notFound('schedule', req.schedule_id);
      return scheduleView(updated);
    }),
    serve(bus, contracts.scheduleDelete, async (req) => ({ deleted: await store.delete(ownerOf(req), req.schedule_id), schedule_id: req.schedule_id })),
  ];
}
