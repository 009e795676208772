import { contracts, type McpStatusReply, type ToolCallReply, type ToolDebugCallRequest } from '@hermes/contracts';
import { decodeJson, ReplyError, serve, type Bus } from '@hermes/bus';
import type { ToolCallHandler } from '../tool-call-handler.js';
import { synthesisedCall } from '../synthesised-call.js';
import type { ToolRegistry } from '../tool-registry.js';
import { McpNotFoundError, McpRequestTimeoutError, McpServerUnavailableError } from './mcp-errors.js';
import type { McpHost } from './mcp-host.js';

export interface McpCommandsOptions {
  bus: Bus;
  mcp: McpHost;
  registry: ToolRegistry;
  calls: ToolCallHandler;
  toolbusId: string;
}

/** What the toolbus stops at shutdown: drained, so a request already routed here is still answered. */
type Drainable = { drain(): Promise<void> };

/** The user a debug call runs as unless the request names one. */
export const DEBUG_USER = 'debug';
/** The roles a debug call has unless the request names them: an operator may try every tool. */
export const DEBUG_ROLES = ['admin'];

/**
 * Serves the ops and debug subjects (`hermes mcp ...`, `hermes tools call`) and follows
 * `mcpReloadAll`, so a reload asked of one replica reaches them all.
 */
export function serveMcpCommands(o: McpCommandsOptions): Drainable[] {
  const { bus, mcp, toolbusId } = o;
  const status = (): McpStatusReply => ({ toolbus_id: toolbusId, ...mcp.status() });
  const reloadAll = bus.subscribe(bus.subjects.mcpReloadAll, (msg) => {
    const decoded = decodeJson(msg.data);
    const from = decoded.ok ? (decoded.value as { toolbus_id?: unknown }).toolbus_id : undefined;
    if (from !== toolbusId) void mcp.reload();
  });
  return [
    reloadAll,
    serve(bus, contracts.mcpStatus, async () => status()),
    serve(bus, contracts.mcpReload, async () => {
      await bus.publish(contracts.mcpReloadAll, { toolbus_id: toolbusId });
      return { toolbus_id: toolbusId, ...(await mcp.reload()) };
    }),
    serve(bus, contracts.mcpCall, (req) => wire(async () => ({ result: { ...(await mcp.callDirect(req.server, req.tool, req.arguments, req.timeout_ms)) } }))),
    serve(bus, contracts.mcpResources, (req) =>
      wire(async () => {
        if (req.read) return { contents: await mcp.readResource(req.server, req.read) };
        if (req.prompt) return { prompt: await mcp.getPrompt(req.server, req.prompt, req.prompt_arguments ?? {}) };
        return mcp.resources(req.server);
      }),
    ),
    serve(bus, contracts.mcpApproveChange, (req) => wire(async () => ({ toolbus_id: toolbusId, approved: approveChanges(o, req.server, req.tool) }))),
    serve(bus, contracts.toolDebugCall, (req) => debugCall(o.calls, req)),
  ];
}

/**
 * A debug call under a synthesised task `dbg_<uuid>` (subtask `debug`); it runs as user `debug`
 * with roles `["admin"]` unless the request names others.
 */
export function debugCall(calls: ToolCallHandler, req: ToolDebugCallRequest): Promise<ToolCallReply> {
  return synthesisedCall(calls, {
    prefix: 'dbg',
    subtask: 'debug',
    tool: req.tool,
    arguments: req.arguments,
    user_id: req.user_id ?? DEBUG_USER,
    roles: req.roles ?? DEBUG_ROLES,
  });
}

/**
 * One approval path for changed tools: an MCP server's (description or schema changed) or, when no
 * server has the name, a remote provider's (policy relaxed); the MCP server wins a shared name.
 */
function approveChanges(o: McpCommandsOptions, source: string, tool?: string): string[] {
  const policy = o.registry.providerPolicy;
  if (o.mcp.has(source) || !policy.knows(source)) return o.mcp.approveChanges(source, tool);
  const approved = policy.approve(source, tool);
  if (approved.length) o.bus.logger.info({ provider: source, tools: approved }, 'approved relaxed policy of provider tools');
  return approved;
}

/** Local errors as the wire errors a caller can act on. */
async function wire<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof McpNotFoundError) throw new ReplyError({ code: 'not_found', message: err.message, retryable: false });
    if (err instanceof McpServerUnavailableError) throw new ReplyError({ code: 'provider_unavailable', message: err.message, retryable: true });
    if (err instanceof McpRequestTimeoutError) throw new ReplyError({ code: 'timeout', message: err.message, retryable: true });
    throw new ReplyError({ code: 'mcp_error', message: (err as Error).message ?? String(err), retryable: false });
  }
}
