import { randomUUID } from 'node:crypto';
import { ownerFields, type ToolCallReply, type ToolHostCallRequest } from '@hermes/contracts';
import type { ToolCallHandler } from './tool-call-handler.js';

/** A call that no task of the dispatcher makes: a debug call or an MCP host's call. */
export interface SynthesisedCall {
  /** Starts the synthesised task id (`dbg`, `mcp`), so audit records say where the call came from. */
  prefix: string;
  /** The subtask id and tool_call_id the call carries (`debug`, `mcp`). */
  subtask: string;
  tool: string;
  arguments: string;
  user_id: string;
  team?: string | undefined;
  roles: readonly string[];
  /** The synthesised task to use (a requester asking again for a parked call's outcome); default `<prefix>_<uuid>`. */
  task_id?: string | undefined;
}

/**
 * One call under a synthesised task `<prefix>_<uuid>` (step 1, index 0): it has its own idempotency key, call record and audit trail like any call, and goes through
 * the same permission, argument, approval and result checks. No task authority is asked, so the
 * subject it arrives on must be one only a trusted requester (the CLI's operator, the gateway)
 * may publish.
 */
export function synthesisedCall(calls: ToolCallHandler, c: SynthesisedCall): Promise<ToolCallReply> {
  const taskId = c.task_id ?? `${c.prefix}_${randomUUID().replace(/-/g, '')}`;
  return calls.handle({
    idempotency_key: `${taskId}:${c.subtask}:1:0`,
    task_id: taskId,
    subtask_id: c.subtask,
    step: 1,
    call_index: 0,
    tool_call_id: c.subtask,
    ...ownerFields(c),
    roles: [...c.roles],
    tool: c.tool,
    arguments: c.arguments,
  });
}

/**
 * An MCP host's call through the gateway, as the API key's owner with the key's roles. The gateway
 * names the task (`task_id`) so that asking again with the same tool and arguments follows the same
 * call record: a call parked for approval answers `pending_approval` until it is decided, then its
 * outcome. A record of another owner under that task is an `idempotency_conflict`, never replayed.
 */
export function hostCall(calls: ToolCallHandler, req: ToolHostCallRequest): Promise<ToolCallReply> {
  return synthesisedCall(calls, { prefix: 'mcp', subtask: 'mcp', ...req });
}
