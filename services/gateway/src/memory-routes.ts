import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { contracts, Id, MemoryForgetOneRequest, MemoryListRequest, teamField, validate } from '@hermes/contracts';
import { HttpError, httpErrorFromBus, sendJson } from './http-errors.js';
import type { RouteHandler } from './task-routes.js';

/** Forgetting a user with many sessions deletes them one by one: more than the default 5 s. */
const FORGET_TIMEOUT_MS = 30_000;

/**
 * `DELETE /v1/users/:id/memory`: forgets a user — every long-term memory and every session of
 * theirs — and answers what was removed. Users may forget themselves; admins anyone.
 */
export function createForgetRoute(deps: { bus: Bus }): RouteHandler {
  return async ({ res, caller, params }) => {
    const userId = memoryOwner(params[0], caller, 'delete');
    try {
      sendJson(res, 200, await request(deps.bus, contracts.memoryForget, { user_id: userId, ...teamField(caller.team) }, { timeoutMs: FORGET_TIMEOUT_MS }));
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
}

/**
 * `DELETE /v1/users/:id/memory/:memory_id`: forgets one long-term memory of the user (its record
 * and vector go); 404 not_found when the user has none under that id, another user's included.
 * Users may forget their own; admins anyone's (in their team).
 */
export function createForgetMemoryRoute(deps: { bus: Bus }): RouteHandler {
  return async ({ res, caller, params }) => {
    const userId = memoryOwner(params[0], caller, 'delete');
    const body = { user_id: userId, ...teamField(caller.team), memory_id: safeDecode(params[1]) };
    const checked = validate(MemoryForgetOneRequest, body);
    if (!checked.ok)
      throw new HttpError(400, { code: 'invalid_memory_id', message: 'memory id must be 1-128 characters of letters, digits, _ -', issues: checked.issues });
    try {
      sendJson(res, 200, await request(deps.bus, contracts.memoryForgetOne, checked.value));
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
}

/**
 * `GET /v1/users/:id/memory?status=&limit=`: the user's long-term memories, newest first, each with
 * its provenance (where it came from: `conversation`, `model`, `tool_result` with the tools), as
 * `hermes memory list` shows them. Users may read their own; admins anyone's (in their team).
 */
export function createMemoryListRoute(deps: { bus: Bus }): RouteHandler {
  return async ({ req, res, caller, params }) => {
    const userId = memoryOwner(params[0], caller, 'read');
    const query = new URL(req.url ?? '/', 'http://gateway').searchParams;
    const body = {
      user_id: userId,
      ...teamField(caller.team),
      ...(query.get('status') ? { status: query.get('status') } : {}),
      ...(query.get('limit') ? { limit: Number(query.get('limit')) } : {}),
    };
    const checked = validate(MemoryListRequest, body);
    if (!checked.ok) throw new HttpError(400, { code: 'invalid_query', message: 'invalid status or limit', issues: checked.issues });
    try {
      sendJson(res, 200, await request(deps.bus, contracts.memoryList, checked.value));
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
}

/** The user of the path, when the caller may act for them (themselves, or anyone for an admin). */
function memoryOwner(raw: string | undefined, caller: { isAdmin: boolean; user_id: string }, verb: 'read' | 'delete'): string {
  const userId = safeDecode(raw);
  if (!validate(Id, userId).ok) throw new HttpError(400, { code: 'invalid_user_id', message: 'user id must be 1-128 characters of letters, digits, _ : @ -' });
  if (!caller.isAdmin && caller.user_id !== userId) {
    throw new HttpError(403, { code: 'forbidden', message: `only the user or an admin may ${verb} a user's memory` });
  }
  return userId;
}

/** A path segment decoded; a malformed escape is '' (an invalid id, which the caller reports). */
function safeDecode(raw: string | undefined): string {
  try {
    return decodeURIComponent(raw ?? '');
  } catch {
    return '';
  }
}
