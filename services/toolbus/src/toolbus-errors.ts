import type { ArgumentIssue } from './tool-types.js';

/** Base class of every error the toolbus throws locally. */
export class ToolbusError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A tool definition cannot be offered to a model: a bug in the tool's author, caught at registration. */
export class InvalidToolDefinitionError extends ToolbusError {
  constructor(
    readonly tool: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('invalid_tool_definition', `tool "${tool}": ${reason}`, options);
  }
}

/**
 * Thrown by a built-in tool when the arguments pass the schema but still make no sense (an unknown
 * time zone, an impossible date): the model's fault, answered as `invalid_arguments`.
 */
export class ToolArgumentError extends ToolbusError {
  constructor(readonly issues: ArgumentIssue[]) {
    super('invalid_arguments', issues.map((i) => `${i.path || '/'} ${i.message}`).join('; '));
  }
}

/**
 * Thrown by a built-in tool that refuses a call it understood (a host that is not allowed): the
 * message is written for the model, and retrying the same call will not help.
 */
export class ToolRefusedError extends ToolbusError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('tool_refused', message, options);
  }
}
