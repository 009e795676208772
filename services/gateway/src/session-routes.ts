import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { contracts, Id, SessionListRequest, teamField, validate } from '@hermes/contracts';
import type { Caller } from './auth.js';
import { HttpError, httpErrorFromBus, sendJson } from './http-errors.js';
import type { RouteHandler } from './task-routes.js';

/**
 * `GET /v1/users/:user/sessions`, `GET /v1/users/:user/sessions/:id` and
 * `DELETE /v1/users/:user/sessions/:id`. A caller acts for the user its API key maps to; an admin
 * for anyone. The memory service checks the session belongs to that user (session_forbidden).
 */
export function createSessionRoutes(deps: { bus: Bus }): { list: RouteHandler; read: RouteHandler; remove: RouteHandler } {
  const ask = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
  return {
    /** `?limit=&cursor=`: the user's sessions, most recently written first. */
    async list({ req, res, caller, params }) {
      const userId = actingFor(params[0], caller);
      const query = new URL(req.url ?? '/', 'http://gateway').searchParams;
      const body = {
        user_id: userId,
        ...teamField(caller.team),
        ...(query.get('limit') ? { limit: Number(query.get('limit')) } : {}),
        ...(query.get('cursor') ? { cursor: query.get('cursor') } : {}),
      };
      const checked = validate(SessionListRequest, body);
      if (!checked.ok) throw new HttpError(400, { code: 'invalid_query', message: 'invalid limit or cursor', issues: checked.issues });
      sendJson(res, 200, await ask(() => request(deps.bus, contracts.sessionList, checked.value)));
    },

    /** `?limit=`: the session's latest messages (default 50, at most 1000), oldest first. */
    async read({ req, res, caller, params }) {
      const userId = actingFor(params[0], caller);
      const sessionId = idParam(params[1], 'session');
      const raw = new URL(req.url ?? '/', 'http://gateway').searchParams.get('limit');
      const limit = raw === null ? undefined : Number(raw);
      if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 1000)) {
        throw new HttpError(400, { code: 'invalid_query', message: 'limit must be a whole number from 1 to 1000' });
      }
      const reply = await ask(() =>
        request(deps.bus, contracts.sessionRead, {
          user_id: userId,
          ...teamField(caller.team),
          session_id: sessionId,
          ...(limit !== undefined ? { limit } : {}),
        }),
      );
      sendJson(res, 200, { session_id: sessionId, messages: reply.messages });
    },

    /** Deletes the session with everything stored for it; 404 when there is none, 409 while a loop holds it. */
    async remove({ res, caller, params }) {
      const userId = actingFor(params[0], caller);
      const sessionId = idParam(params[1], 'session');
      const reply = await ask(() => request(deps.bus, contracts.sessionDelete, { user_id: userId, ...teamField(caller.team), session_id: sessionId }));
      if (!reply.deleted) throw new HttpError(404, { code: 'not_found', message: `no session ${sessionId}` });
      sendJson(res, 200, { session_id: sessionId, ...reply });
    },
  };
}

/** The user a `/v1/users/:user/...` route acts for: the caller's own, or anyone's for an admin. */
export function actingFor(raw: string | undefined, caller: Caller): string {
  const userId = idParam(raw, 'user');
  if (!caller.isAdmin && caller.user_id !== userId)
    throw new HttpError(403, { code: 'forbidden', message: "only the user or an admin may act on a user's data" });
  return userId;
}

function idParam(raw: string | undefined, what: 'user' | 'session'): string {
  let id = '';
  try {
    id = decodeURIComponent(raw ?? '');
  } catch {
    // a malformed escape is an invalid id, reported below
  }
  if (!validate(Id, id).ok)
    throw new HttpError(400, { code: `invalid_${what}_id`, message: `${what} id must be 1-128 characters of letters, digits, _ : @ -` });
  return id;
}
