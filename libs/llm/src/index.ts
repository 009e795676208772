export { LlmClient } from './llm-client.js';
export type { LlmClientOptions, ChatRequest, ChatResult, ModelRole, RoleEndpoint } from './llm-client.js';
export { LlmError, toLlmError } from './llm-errors.js';
export { unlimitedPermits } from './permits.js';
export type { Permit, PermitProvider } from './permits.js';
export { llmSettings, roleEndpoints } from './llm-settings.js';
