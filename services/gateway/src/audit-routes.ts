import { replaySubject, type Bus } from '@hermes/bus';
import type { TaskAuditView, ToolAuditRecord } from '@hermes/contracts';
import { HttpError, sendJson } from './http-errors.js';
import { getTask, taskIdParam, type RouteHandler } from './task-routes.js';

/**
 * `GET /v1/tasks/:id/audit`: the task's tool-call audit records from the toolbus's audit stream,
 * as `hermes audit` prints them. Only whoever may read the task (its owner or an admin) may read
 * them: the task is looked up first, so another user's task is the same 404 as a missing one.
 */
export function createAuditRoute(deps: { bus: Bus }): RouteHandler {
  return async ({ res, caller, params }) => {
    const view = await getTask(deps.bus, taskIdParam(params[0]), caller);
    const records = await replaySubject(deps.bus, {
      stream: deps.bus.subjects.streams.toolAudit,
      subject: deps.bus.subjects.toolAudit(view.task_id),
      onMissingStream: (err) => {
        // No toolbus has ever started on this NATS: nothing can be audited yet, and a toolbus would fix it.
        throw new HttpError(
          503,
          { code: 'audit_unavailable', message: 'there is no tool audit stream (is the toolbus running?)', retryable: true },
          {},
          { cause: err },
        );
      },
    });
    sendJson(res, 200, { task_id: view.task_id, records: records.map((r) => r.value as ToolAuditRecord) } satisfies TaskAuditView);
  };
}
