import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { contracts, Id, teamField, validate } from '@hermes/contracts';
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
    let userId = '';
    try {
      userId = decodeURIComponent(params[0] ?? '');
    } catch {
      // a malformed escape is an invalid id, reported below
    }
    if (!validate(Id, userId).ok) throw new HttpError(400, { code: 'invalid_user_id', message: 'user id must be 1-128 characters of letters, digits, _ : @ -' });
    if (!caller.isAdmin && caller.user_id !== userId) {
      throw new HttpError(403, { code: 'forbidden', message: "only the user or an admin may delete a user's memory" });
    }
    try {
      sendJson(res, 200, await request(deps.bus, contracts.memoryForget, { user_id: userId, ...teamField(caller.team) }, { timeoutMs: FORGET_TIMEOUT_MS }));
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
}
