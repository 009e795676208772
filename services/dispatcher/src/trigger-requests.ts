import { randomUUID } from 'node:crypto';
import { contracts, ownerOf, type Trigger } from '@hermes/contracts';
import { ReplyError, serve, type Bus } from '@hermes/bus';
import { TriggerStore } from './trigger-store.js';
import { createOwned, listOwned, notFound, ownedOrNotFound, type OwnedKind } from './owned-requests.js';
import { triggerProblem } from './trigger-spec.js';

const TRIGGER: OwnedKind<Trigger> = {
  name: 'trigger',
  idOf: (t) => t.trigger_id,
  specOf: (t) => JSON.stringify([t.subject, t.condition ?? null, t.task]),
  createdAt: (t) => t.created_at,
};

/** Answers the trigger requests: every one is about one owner's triggers (list: or a team's). */
export function serveTriggerRequests(bus: Bus, store: TriggerStore): ReturnType<typeof serve>[] {
  return [
    serve(bus, contracts.triggerCreate, async (req) => {
      const owner = ownerOf(req);
      const problem = triggerProblem(req.spec, { prefix: bus.subjects.prefix, team: owner.team });
      if (problem) throw new ReplyError(problem);
      const now = new Date().toISOString();
      const wanted: Trigger = {
        v: 1,
        trigger_id: req.spec.trigger_id ?? `t-${randomUUID()}`,
        team: owner.team,
        user_id: owner.user_id,
        subject: req.spec.subject,
        ...(req.spec.condition !== undefined ? { condition: req.spec.condition } : {}),
        task: req.spec.task,
        paused: false,
        created_at: now,
        updated_at: now,
        firings: 0,
      };
      return createOwned(store, TRIGGER, wanted);
    }),
    serve(bus, contracts.triggerGet, (req) => ownedOrNotFound(store, TRIGGER, ownerOf(req), req.trigger_id)),
    serve(bus, contracts.triggerList, async (req) => ({ triggers: await listOwned(store, TRIGGER, req, TriggerStore.teamFilter) })),
    serve(bus, contracts.triggerUpdate, async (req) => {
      const now = new Date().toISOString();
      const updated = await store.update(ownerOf(req), req.trigger_id, (t) =>
        t.paused === req.paused ? undefined : { ...t, paused: req.paused, updated_at: now },
      );
      if (!updated) throw notFound('trigger', req.trigger_id);
      return updated;
    }),
    serve(bus, contracts.triggerDelete, async (req) => ({ deleted: await store.delete(ownerOf(req), req.trigger_id), trigger_id: req.trigger_id })),
  ];
}
