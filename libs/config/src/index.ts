export { loadConfig } from './load-config.js';
export type { LoadConfigOptions } from './load-config.js';
export { ConfigError } from './config-error.js';
export { commonSettings } from './common-settings.js';
