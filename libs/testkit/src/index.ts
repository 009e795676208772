export { startChildService } from './child-service.js';
export type { ChildService, ChildServiceOptions } from './child-service.js';
export { ProcessStartError, TestkitError, WaitForLogError } from './errors.js';
export { freePort } from './free-port.js';
export { eventually } from './eventually.js';
export type { ExitStatus } from './managed-process.js';
export { startNatsServer } from './nats-server.js';
export { startNatsCluster } from './nats-cluster.js';
export type { NatsClusterHandle, NatsClusterOptions } from './nats-cluster.js';
export type { NatsServerHandle, NatsServerOptions } from './nats-server.js';
export { cleanupAll } from './process-registry.js';
export { startRedisServer } from './redis-server.js';
export type { RedisServerHandle, RedisServerOptions } from './redis-server.js';
export { defaultResponder, demoResponder, lastUserMessageText } from './responders.js';
export { startScriptedLlm } from './scripted-llm.js';
export type { ScriptedLlm, ScriptedLlmOptions } from './scripted-llm.js';
export { SCRIPTED_PROFILES } from './server-profiles.js';
export type { ContextOverflow, ScriptedProfile } from './server-profiles.js';
export type {
  ChatContentPart,
  ChatMessage,
  ChatRequestBody,
  RecordedRequest,
  Responder,
  ScriptedContent,
  ScriptedError,
  ScriptedHang,
  ScriptedResponse,
  ScriptedToolCall,
  ScriptedToolCalls,
  ScriptedUsage,
} from './scripted-response.js';
export { redisCommand } from './redis-command.js';
export { SentinelGroupError, startRedisSentinelGroup } from './redis-sentinel.js';
export type { RedisSentinelGroupHandle, RedisSentinelGroupOptions } from './redis-sentinel.js';
