import { context, createContextKey, trace } from '@opentelemetry/api';
import type { ToolCallRequest } from '@hermes/contracts';
import { contextFromTraceparent } from '@hermes/contracts';
import { inSpan, withTaskFields } from '@hermes/telemetry';
import type { CallRecord } from './call-record.js';

const TOOL_CALL_ID = createContextKey('hermes.toolbus.tool_call_id');

/**
 * Handles a toolCall request with the task named for its log lines and the model's tool call id
 * at hand for the `execute_tool` span (gen_ai.tool.call.id), wherever the call ends up running.
 */
export function inToolCall<T>(req: ToolCallRequest, fn: () => Promise<T>): Promise<T> {
  const ctx = withTaskFields(context.active(), { task_id: req.task_id, user_id: req.user_id }).setValue(TOOL_CALL_ID, req.tool_call_id);
  return context.with(ctx, fn);
}

/** The model's id of the tool call being handled, if any. */
export function activeToolCallId(): string | undefined {
  const v = context.active().getValue(TOOL_CALL_ID);
  return typeof v === 'string' ? v : undefined;
}

/**
 * Runs an approved call in the trace of the request that parked it (the task's), not the
 * approver's: a `run approved call` span there, linked to the decision's span.
 */
export function inParkedCallTrace<T>(record: CallRecord, fn: () => Promise<T>): Promise<T> {
  const decision = trace.getSpanContext(context.active());
  const base = record.traceparent ? contextFromTraceparent(record.traceparent) : context.active();
  const parent = withTaskFields(base, { task_id: record.origin.task_id, user_id: record.origin.user_id }).setValue(TOOL_CALL_ID, record.origin.tool_call_id);
  const attributes = {
    'gen_ai.tool.name': record.origin.tool,
    'hermes.tool.call_id': record.call_id,
    ...(record.approval?.decided_by ? { 'hermes.tool.decided_by': record.approval.decided_by } : {}),
  };
  return inSpan('run approved call', { attributes, ...(record.traceparent && decision ? { links: [{ context: decision }] } : {}) }, fn, parent);
}
