export { loadConfig } from './load-config.js';
export type { LoadConfigOptions } from './load-config.js';
export { ConfigError } from './config-error.js';
export { commonSettings, natsConnectionSettings } from './common-settings.js';
