import { faultOf, type Fault } from './faults.js';

export interface HermesErrorOptions {
  cause?: unknown;
  /** Whose fault it is; default: by code (faultOf). */
  fault?: Fault;
}

/**
 * The one base of each library's local error class (BusError, LlmError, ToolSdkError, ...): the
 * subclass's name, a stable `code` and whose `fault` it is. A subclass that knows whether trying
 * again can help says so with its own `retryable` (a field or getter). Errors that cross the bus
 * are WireError data, never these.
 */
export class HermesError extends Error {
  readonly code: string;
  readonly fault: Fault;

  constructor(code: string, message: string, options: HermesErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.fault = options.fault ?? faultOf({ code });
  }
}
