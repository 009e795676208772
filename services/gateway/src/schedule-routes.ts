import type { Bus } from '@hermes/bus';
import { contracts, ScheduleSpec } from '@hermes/contracts';
import { createOwnedRoutes } from './owned-routes.js';

/** `/v1/schedules`: a caller's schedules (docs/schedules.md). */
export function createScheduleRoutes(deps: { bus: Bus; maxBodyBytes: number }) {
  return createOwnedRoutes({
    ...deps,
    kind: 'schedule',
    spec: ScheduleSpec,
    specHint: '{ "cron", "timezone"?, "missed"?, "schedule_id"?, "task": { "goal", ... } }',
    create: contracts.scheduleCreate,
    get: contracts.scheduleGet,
    list: contracts.scheduleList,
    update: contracts.scheduleUpdate,
    remove: contracts.scheduleDelete,
  });
}
