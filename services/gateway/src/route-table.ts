import { HTTP_OPERATIONS, type HttpOperationId } from '@hermes/contracts';
import type { RouteHandler } from './task-routes.js';

/** One path of the API with a handler per method. */
export interface Route {
  pattern: RegExp;
  /** Route template for logs and span names (ids would make every span name unique). */
  template: string;
  /**
   * Names of the pattern's groups to put on the request's log line and span (`task_id`, ...;
   * undefined skips one). A user id in the path is left out: the caller is logged as `user_id`,
   * which LOG_USER_ID pseudonymises, and a second id field would escape it.
   */
  fields?: readonly (string | undefined)[];
  methods: Partial<Record<string, RouteHandler>>;
  /** Methods answered without an API key (the API description). */
  open: ReadonlySet<string>;
}

/** Log fields of the paths that carry ids worth logging. */
const FIELDS: Record<string, readonly (string | undefined)[]> = {
  '/v1/tasks/{id}': ['task_id'],
  '/v1/tasks/{id}/events': ['task_id'],
  '/v1/tasks/{id}/plan': ['task_id'],
  '/v1/tasks/{id}/audit': ['task_id'],
  '/v1/tasks/{id}/approvals/{call_id}': ['task_id', 'call_id'],
  '/v1/users/{user}/sessions/{id}': [undefined, 'session_id'],
  '/v1/users/{id}/memory/{memory_id}': [undefined, 'memory_id'],
  '/v1/schedules/{id}': ['schedule_id'],
  '/v1/schedules/{id}/pause': ['schedule_id'],
  '/v1/schedules/{id}/resume': ['schedule_id'],
  '/v1/triggers/{id}': ['trigger_id'],
  '/v1/triggers/{id}/pause': ['trigger_id'],
  '/v1/triggers/{id}/resume': ['trigger_id'],
};

/**
 * The gateway's routes, built from the operations the OpenAPI document describes
 * (`HTTP_OPERATIONS` in the contracts): a handler is needed for each (the type says so), and no
 * route exists that the document does not show.
 */
export function routeTable(handlers: Record<HttpOperationId, RouteHandler>): Route[] {
  const byPath = new Map<string, Route>();
  for (const op of HTTP_OPERATIONS) {
    let route = byPath.get(op.path);
    if (!route) {
      const pattern = new RegExp(`^${op.path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '([^/]+)')}$`);
      const fields = FIELDS[op.path];
      route = { pattern, template: op.path.replace(/\{([^}]+)\}/g, ':$1'), methods: {}, open: new Set(), ...(fields ? { fields } : {}) };
      byPath.set(op.path, route);
    }
    const method = op.method.toUpperCase();
    route.methods[method] = handlers[op.operationId];
    if ('public' in op && op.public) (route.open as Set<string>).add(method);
  }
  return [...byPath.values()];
}
