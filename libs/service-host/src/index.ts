export { hostService, serviceConfig } from './service-host.js';
export type { HostServiceOptions, ServiceContext, RunningService } from './service-host.js';
export { installShutdown } from './shutdown.js';
export type { ShutdownStep } from './shutdown.js';
