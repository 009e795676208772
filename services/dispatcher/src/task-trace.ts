import { context, trace, type Link } from '@opentelemetry/api';
import type { TaskView, TraceContext } from '@hermes/contracts';
import { contextFromTraceparent, currentTraceparent } from '@hermes/contracts';
import { inSpan, withTaskFields } from '@hermes/telemetry';

/** The active span's trace context, to store with a new task (undefined outside any trace). */
export function activeTraceContext(): TraceContext | undefined {
  const sc = trace.getSpanContext(context.active());
  const traceparent = currentTraceparent();
  if (!sc || !traceparent) return undefined;
  return { trace_id: sc.traceId, traceparent, ...(sc.traceState ? { tracestate: sc.traceState.serialize() } : {}) };
}

/**
 * Runs dispatcher work for a task inside the task's own trace. Work that is already in it (a
 * result consumed from the task's runtime) just gets the task named for its logs. Work that is
 * not — the timers' retries and timeouts, a cancel request from another
 * trace — gets a `task <what>` span under the task's stored trace context, linked to whatever
 * triggered it, so the jobs it publishes still land in the task's trace.
 */
export async function inTaskTrace<T>(view: TaskView, what: string, fn: () => Promise<T>): Promise<T> {
  const fields = { task_id: view.task_id, user_id: view.user_id };
  const active = trace.getSpanContext(context.active());
  const stored = view.trace_context;
  if (!stored || active?.traceId === stored.trace_id) return context.with(withTaskFields(context.active(), fields), fn);
  const parent = withTaskFields(contextFromTraceparent(stored.traceparent, stored.tracestate), fields);
  const links: Link[] = active ? [{ context: active }] : [];
  return inSpan(`task ${what}`, { attributes: { 'hermes.task.id': view.task_id }, links }, fn, parent);
}
