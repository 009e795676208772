/**
 * Where the SDK logs: a pino logger fits as it is; any object with these methods will do. The SDK
 * takes no logging stack of its own, so a team hosting tools keeps the one it has.
 */
export interface ToolSdkLogger {
  info(fields: object | string, message?: string): void;
  warn(fields: object | string, message?: string): void;
  error(fields: object | string, message?: string): void;
  child(bindings: object): ToolSdkLogger;
}

/** The default: nothing is logged. */
export const silentLogger: ToolSdkLogger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
