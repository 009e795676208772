import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { contracts, Id, ScheduleSpec, teamField, validate } from '@hermes/contracts';
import type { Caller } from './auth.js';
import { HttpError, httpErrorFromBus, sendJson } from './http-errors.js';
import { readJsonBody } from './json-body.js';
import type { RouteHandler } from './task-routes.js';

/**
 * `/v1/schedules`: a caller's schedules (docs/schedules.md). Schedules belong to the caller's team
 * and user; an admin of the team lists everyone's and reaches another user's with `?user=<id>`.
 */
export function createScheduleRoutes(deps: {
  bus: Bus;
  maxBodyBytes: number;
}): Record<'create' | 'list' | 'get' | 'remove' | 'pause' | 'resume', RouteHandler> {
  const ask = async <T>(send: () => Promise<T>): Promise<T> => {
    try {
      return await send();
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
  const bus = deps.bus;
  const setPaused =
    (paused: boolean): RouteHandler =>
    async ({ req, res, caller, params }) => {
      const view = await ask(() => request(bus, contracts.scheduleUpdate, { ...ownerFor(req.url, caller), schedule_id: scheduleIdParam(params[0]), paused }));
      sendJson(res, 200, view);
    };
  return {
    async create({ req, res, caller }) {
      const body = validate(ScheduleSpec, await readJsonBody(req, deps.maxBodyBytes));
      if (!body.ok)
        throw new HttpError(400, {
          code: 'invalid_payload',
          message: 'the body must be a schedule: { "cron", "timezone"?, "missed"?, "schedule_id"?, "task": { "goal", ... } }',
          issues: body.issues,
        });
      const view = await ask(() => request(bus, contracts.scheduleCreate, { user_id: caller.user_id, ...teamField(caller.team), spec: body.value }));
      sendJson(res, 201, view);
    },
    async list({ req, res, caller }) {
      const asked = new URL(req.url ?? '/', 'http://x').searchParams.get('user');
      const user_id = caller.isAdmin ? asked : caller.user_id;
      sendJson(res, 200, await ask(() => request(bus, contracts.scheduleList, { user_id, ...teamField(caller.team) })));
    },
    async get({ req, res, caller, params }) {
      sendJson(res, 200, await ask(() => request(bus, contracts.scheduleGet, { ...ownerFor(req.url, caller), schedule_id: scheduleIdParam(params[0]) })));
    },
    async remove({ req, res, caller, params }) {
      const reply = await ask(() => request(bus, contracts.scheduleDelete, { ...ownerFor(req.url, caller), schedule_id: scheduleIdParam(params[0]) }));
      if (!reply.deleted) throw new HttpError(404, { code: 'not_found', message: `no schedule ${reply.schedule_id}` });
      sendJson(res, 200, reply);
    },
    pause: setPaused(true),
    resume: setPaused(false),
  };
}

/** Whose schedule a request is about: the caller's, or for an admin the `?user=` of the team. */
function ownerFor(url: string | undefined, caller: Caller): { user_id: string; team?: string } {
  const asked = new URL(url ?? '/', 'http://x').searchParams.get('user');
  const user_id = caller.isAdmin && asked ? asked : caller.user_id;
  if (!validate(Id, user_id).ok) throw new HttpError(400, { code: 'invalid_user_id', message: 'user must be 1-128 characters of letters, digits, _ : @ -' });
  return { user_id, ...teamField(caller.team) };
}

function scheduleIdParam(raw: string | undefined): string {
  let id: string;
  try {
    id = decodeURIComponent(raw ?? '');
  } catch {
    id = '';
  }
  if (!validate(Id, id).ok)
    throw new HttpError(400, { code: 'invalid_schedule_id', message: 'schedule id must be 1-128 characters of letters, digits, _ : @ -' });
  return id;
}
