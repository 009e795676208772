import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolbusError } from '../toolbus-errors.js';

/** The MCP server is not connected (starting, reconnecting, or lost while a call ran): retry later. */
export class McpServerUnavailableError extends ToolbusError {
  readonly retryable = true;
  constructor(
    readonly server: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('provider_unavailable', `MCP server "${server}" is not available right now (${reason})`, options);
  }
}

/** A name given to a debug or ops command does not exist (server, tool or resource). */
export class McpNotFoundError extends ToolbusError {
  constructor(message: string) {
    super('not_found', message);
  }
}

/** An MCP request got no answer within its timeout (or was aborted by the caller): retryable. */
export class McpRequestTimeoutError extends ToolbusError {
  readonly retryable = true;
  constructor(
    readonly server: string,
    options?: { cause?: unknown },
  ) {
    super('tool_timeout', `MCP server "${server}" did not answer in time`, options);
  }
}

/**
 * The one place that reads the MCP SDK's errors, by their JSON-RPC code: a lost connection means
 * the server is unavailable, a request timeout (the SDK also reports an aborted request so) is
 * ours to retry; a failure while the server was not ready is blamed on that. Anything else (the
 * server's own error reply, say) is returned as it is.
 */
export function fromMcpError(err: unknown, o: { server: string; state: string }): unknown {
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)
    return new McpServerUnavailableError(o.server, 'the connection was lost during the call', { cause: err });
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return new McpRequestTimeoutError(o.server, { cause: err });
  if (o.state !== 'ready') return new McpServerUnavailableError(o.server, `it is ${o.state}`, { cause: err });
  return err;
}
