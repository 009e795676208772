import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { contracts } from '@hermes/contracts';
import { httpErrorFromBus, sendJson } from './http-errors.js';
import { taskIdParam, type RouteHandler } from './task-routes.js';

/**
 * `DELETE /v1/tasks/:id`: cancels the task (the caller's own, or any of the team for an admin) and answers
 * with its state. Cancelling a task that already ended changes nothing and returns it as it is.
 */
export function createCancelRoute(deps: { bus: Bus }): RouteHandler {
  return async ({ req, res, caller, params }) => {
    const taskId = taskIdParam(params[0]);
    const reason = new URL(req.url ?? '/', 'http://x').searchParams.get('reason') ?? `cancelled by ${caller.user_id}`;
    try {
      const view = await request(
        deps.bus,
        contracts.teamTaskCancel,
        { task_id: taskId, user_id: caller.isAdmin ? null : caller.user_id, reason: reason.slice(0, 2000) },
        { subject: deps.bus.subjects.teamTaskCancel(caller.team) },
      );
      sendJson(res, 200, view);
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
}
