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
