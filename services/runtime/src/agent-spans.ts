import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import type { RuntimeJob, RuntimeResult, ToolCallReply, ToolCallRequest } from '@hermes/contracts';
import { contentAttribute, genAiContentCapture, inSpan, withConversation, withTaskFields } from '@hermes/telemetry';

// Read once: the setting is process-wide and this is on every tool call.
const captureContent = genAiContentCapture();

/**
 * Runs a job inside an `invoke_agent <role>` span (GenAI conventions): one per subtask loop, plan
 * or compose call. The session is the conversation (`gen_ai.conversation.id`, picked up by every
 * `chat` span inside), and the task and user are named for the job's log lines and messages.
 * A throw (the job will be redelivered) marks this attempt's span failed.
 */
export function runInAgentSpan<T>(job: RuntimeJob, attempt: number, llm: { model: string; provider: string }, fn: () => Promise<T>): Promise<T> {
  const parent = withConversation(withTaskFields(context.active(), { task_id: job.task_id, user_id: job.user_id }), job.session_id);
  const attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': job.model_role,
    'gen_ai.conversation.id': job.session_id,
    'gen_ai.request.model': llm.model,
    'gen_ai.provider.name': llm.provider,
    'hermes.task.id': job.task_id,
    'hermes.subtask.id': job.subtask_id,
    'hermes.job.id': job.job_id,
    'hermes.job.kind': job.kind ?? 'agent',
    'hermes.job.attempt': attempt,
  };
  return inSpan(`invoke_agent ${job.model_role}`, { kind: SpanKind.INTERNAL, attributes }, fn, parent);
}

/** Records a job's reported outcome on the active `invoke_agent` span. */
export function recordAgentOutcome(result: RuntimeResult): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.setAttributes({
    'gen_ai.usage.input_tokens': result.usage.input_tokens,
    'gen_ai.usage.output_tokens': result.usage.output_tokens,
    'hermes.job.outcome': result.outcome,
    ...(result.model ? { 'gen_ai.response.model': result.model } : {}),
  });
  if (result.error) {
    span.setAttribute('error.type', result.error.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.error.message });
  }
}

/**
 * An `execute_tool <name>` span around one tool call from the agent loop (the toolbus's own
 * `execute_tool` span is its child, across the bus). Arguments and result only when content
 * capture is on.
 */
export function traceToolCall(req: ToolCallRequest, fn: () => Promise<ToolCallReply>): Promise<ToolCallReply> {
  const attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': req.tool,
    'gen_ai.tool.call.id': req.tool_call_id,
    'gen_ai.tool.type': 'function',
    'hermes.tool.idempotency_key': req.idempotency_key,
  };
  return inSpan(`execute_tool ${req.tool}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    if (captureContent && span.isRecording()) span.setAttribute('gen_ai.tool.call.arguments', contentAttribute(req.arguments));
    const reply = await fn();
    endToolSpan(span, reply);
    return reply;
  });
}

function endToolSpan(span: Span, reply: ToolCallReply): void {
  if (!span.isRecording()) return;
  span.setAttribute('hermes.tool.status', reply.status);
  if (reply.replayed) span.setAttribute('hermes.tool.replayed', true);
  if (reply.status === 'error') {
    span.setAttribute('error.type', reply.error?.code ?? 'tool_failed');
    span.setStatus({ code: SpanStatusCode.ERROR, ...(reply.error?.message ? { message: reply.error.message } : {}) });
  } else if (captureContent && reply.status === 'ok') {
    span.setAttribute('gen_ai.tool.call.result', contentAttribute(reply.result));
  }
}

/** A span for the time a tool call waits for a person's decision (require_confirm tools). */
export function traceApprovalWait<T>(req: ToolCallRequest, callId: string, fn: () => Promise<T>): Promise<T> {
  return inSpan('approval wait', { attributes: { 'gen_ai.tool.name': req.tool, 'hermes.tool.call_id': callId } }, fn);
}

/** A span for assembling the opening context from the session (memory service): the memory recall. */
export function traceMemoryContext<T extends { messages: unknown[]; tokens: number; summary_used: boolean }>(
  job: RuntimeJob,
  fn: () => Promise<T>,
): Promise<T> {
  return inSpan('memory context', { attributes: { 'gen_ai.conversation.id': job.session_id } }, async (span) => {
    const reply = await fn();
    span.setAttributes({
      'hermes.memory.messages': reply.messages.length,
      'hermes.memory.tokens': reply.tokens,
      'hermes.memory.summary_used': reply.summary_used,
    });
    return reply;
  });
}

/** A span for recalling the user's long-term memories into the opening context (runs alongside the context read). */
export function traceMemoryRecall(fn: () => Promise<string>): Promise<string> {
  return inSpan('memory recall', {}, async (span) => {
    const background = await fn();
    span.setAttribute('hermes.memory.background_chars', background.length);
    return background;
  });
}
