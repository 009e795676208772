import { randomUUID } from 'node:crypto';
import { contracts, ownerOf, wireError, type Owner, type Schedule, type ScheduleView } from '@hermes/contracts';
import { ReplyError, serve, type Bus } from '@hermes/bus';
import type { ScheduleStore } from './schedule-store.js';
import { nextFireAt, scheduleProblem } from './schedule-clock.js';

/** A schedule as answered, with its next fire time. */
export function scheduleView(s: Schedule, now = new Date()): ScheduleView {
  const next = nextFireAt(s, new Date(Math.max(now.getTime(), Date.parse(s.fired_through))));
  return { ...s, ...(next ? { next_fire_at: next.toISOString() } : {}) };
}

const notFound = (id: string) => new ReplyError(wireError('not_found', `no schedule ${id}`, { schedule_id: id }));

/** What makes two specs the same schedule (a create repeated with its id is answered, not refused). */
const specOf = (s: Pick<Schedule, 'cron' | 'timezone' | 'missed' | 'task'>) => JSON.stringify([s.cron, s.timezone, s.missed, s.task]);

/** Answers the schedule requests: every one is about one owner's schedules (list: or a team's). */
export function serveScheduleRequests(bus: Bus, store: ScheduleStore): ReturnType<typeof serve>[] {
  const owned = async (owner: Owner, id: string) => (await store.get(owner, id)) ?? Promise.reject(notFound(id));
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
      const { schedule, created } = await store.createOrGet(wanted);
      if (!created && specOf(schedule) !== specOf(wanted)) {
        throw new ReplyError(
          wireError('duplicate_conflict', `schedule ${wanted.schedule_id} exists with another spec; delete it first or use a new id`, {
            schedule_id: wanted.schedule_id,
          }),
        );
      }
      return scheduleView(schedule);
    }),
    serve(bus, contracts.scheduleGet, async (req) => scheduleView(await owned(ownerOf(req), req.schedule_id))),
    serve(bus, contracts.scheduleList, async (req) => {
      const team = ownerOf({ user_id: '', ...(req.team ? { team: req.team } : {}) }).team;
      const mine = (await store.all()).filter((s) => s.team === team && (req.user_id === null || s.user_id === req.user_id));
      mine.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.schedule_id.localeCompare(b.schedule_id)));
      return { schedules: mine.map((s) => scheduleView(s)) };
    }),
    serve(bus, contracts.scheduleUpdate, async (req) => {
      const now = new Date().toISOString();
      const updated = await store.update(ownerOf(req), req.schedule_id, (s) => {
        if (s.paused === req.paused) return undefined;
        // Resuming counts from now: what fell due while paused was asked not to run.
        return { ...s, paused: req.paused, updated_at: now, ...(req.paused ? {} : { fired_through: now }) };
      });
      if (!updated) throw notFound(req.schedule_id);
      return scheduleView(updated);
    }),
    serve(bus, contracts.scheduleDelete, async (req) => ({ deleted: await store.delete(ownerOf(req), req.schedule_id), schedule_id: req.schedule_id })),
  ];
}
