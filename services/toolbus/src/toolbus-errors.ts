/** Base class of every error the toolbus throws locally. */
export class ToolbusError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A tool definition cannot be offered to a model: a bug in the tool's author, caught at start-up. */
export class InvalidToolDefinitionError extends ToolbusError {
  constructor(
    readonly tool: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('invalid_tool_definition', `tool "${tool}": ${reason}`, options);
  }
}
