export { createLogger, hashUserId } from './logger.js';
export type { Logger, LoggerCreateOptions, UserIdLogMode } from './logger.js';
export {
  startTelemetry,
  installPropagation,
  hermesTracer,
  hermesMeter,
  otlpProtocol,
  parseResourceAttributes,
  resourceAttributes,
  OTLP_PROTOCOLS,
  TelemetryConfigError,
} from './tracing.js';
export type { OtlpProtocol, TelemetryHandle, TelemetryOptions } from './tracing.js';
export { inSpan } from './span-runner.js';
export { startHealthServer } from './health-server.js';
export type { HealthServer, HealthServerOptions, Liveness } from './health-server.js';
export { withTaskFields, runForTask, activeTaskFields, withConversation, activeConversationId, TASK_BAGGAGE_KEY, USER_BAGGAGE_KEY } from './task-context.js';
export type { TaskFields } from './task-context.js';
export { genAiContentCapture, contentAttribute, GENAI_CONTENT_MAX_CHARS } from './genai-content.js';
