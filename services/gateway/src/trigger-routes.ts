import type { Bus } from '@hermes/bus';
import { contracts, TriggerSpec } from '@hermes/contracts';
import { createOwnedRoutes } from './owned-routes.js';

/** `/v1/triggers`: a caller's triggers on their team's events (docs/schedules.md). */
export function createTriggerRoutes(deps: { bus: Bus; maxBodyBytes: number }) {
  return createOwnedRoutes({
    ...deps,
    kind: 'trigger',
    spec: TriggerSpec,
    specHint: '{ "subject", "condition"?, "trigger_id"?, "task": { "goal", ... } }',
    create: contracts.triggerCreate,
    get: contracts.triggerGet,
    list: contracts.triggerList,
    update: contracts.triggerUpdate,
    remove: contracts.triggerDelete,
  });
}
