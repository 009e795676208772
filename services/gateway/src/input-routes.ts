import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { contracts, TaskInputBody, validate } from '@hermes/contracts';
import { HttpError, httpErrorFromBus, sendJson } from './http-errors.js';
import { readJsonBody } from './json-body.js';
import { taskIdParam, type RouteHandler } from './task-routes.js';

/**
 * `POST /v1/tasks/:id/input`: the answer to the question a task asked (ask_user). The dispatcher
 * checks the owner as for a cancel (the caller's own task, any of the team for an admin; another
 * user's is not found) and refuses an answer nobody asked for with not_waiting_for_input (409).
 */
export function createInputRoute(deps: { bus: Bus; maxBodyBytes: number }): RouteHandler {
  return async ({ req, res, caller, params }) => {
    const taskId = taskIdParam(params[0]);
    const body = validate(TaskInputBody, await readJsonBody(req, deps.maxBodyBytes));
    if (!body.ok) {
      throw new HttpError(400, { code: 'invalid_payload', message: 'the body must be { "answer": string, "call_id"?: string }', issues: body.issues });
    }
    try {
      const view = await request(
        deps.bus,
        contracts.teamTaskInput,
        { task_id: taskId, user_id: caller.isAdmin ? null : caller.user_id, ...body.value },
        { subject: deps.bus.subjects.teamTaskInput(caller.team) },
      );
      sendJson(res, 200, view);
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
}
