export { hostToolProvider } from './tool-provider.js';
export type { HostToolProviderOptions, ToolProvider } from './tool-provider.js';
export { defineTool } from './define-tool.js';
export type { HostedTool, ToolArgs, ToolContext, ToolHandler, ToolSpecInput } from './define-tool.js';
export type { CallMemoryOptions } from './call-memory.js';
export { ToolSdkError, ToolProviderConfigError, ToolFailure } from './errors.js';
export type { ToolSdkLogger } from './sdk-logger.js';
