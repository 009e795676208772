export { createLogger } from './logger.js';
export type { Logger } from './logger.js';
export { startTelemetry, installPropagation, hermesTracer, hermesMeter } from './tracing.js';
export type { TelemetryHandle } from './tracing.js';
export { startHealthServer } from './health-server.js';
export type { HealthServer } from './health-server.js';
