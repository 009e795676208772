export { startHermesStack, serviceEntry } from './hermes-stack.js';
export type { HermesStack, HermesStackOptions, ApiKey, ServiceKind } from './hermes-stack.js';
