import { context, createContextKey } from '@opentelemetry/api';
import type { ToolCallRequest } from '@hermes/contracts';
import { withTaskFields } from '@hermes/telemetry';

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
