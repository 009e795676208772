import { Type } from '@sinclair/typebox';
import { serviceConfig, type HostServiceOptions, type ServiceContext } from '@hermes/service-host';
import { llmSettings, openLlmClient } from '@hermes/llm';
import { longTermSettings, longTermTuning } from './longterm/longterm-settings.js';
import { createEmbedder, createVectorStore, longTermStoreSettings } from './longterm/longterm-stores.js';
import { startMemoryService, type MemoryTuning } from './memory-service.js';
import { closeRedis, connectRedis, SENTINEL_LIST_PATTERN, sentinelsOf } from './redis-client.js';

const settings = Type.Object({
  ...llmSettings,
  ...longTermStoreSettings,
  ...longTermSettings,
  REDIS_URL: Type.String({
    default: 'redis://127.0.0.1:6379',
    description: 'Redis holding sessions (with REDIS_SENTINELS only its password, user and db are used)',
  }),
  REDIS_SENTINELS: Type.String({
    default: '',
    pattern: SENTINEL_LIST_PATTERN,
    description:
      'Redis Sentinels as host:port,... : the master is whichever they name for REDIS_SENTINEL_NAME, followed through failovers; empty: REDIS_URL alone',
  }),
  REDIS_SENTINEL_NAME: Type.String({ default: 'mymaster', minLength: 1, description: "the Sentinels' name of the master group (sentinel monitor <name> ...)" }),
  REDIS_SENTINEL_PASSWORD: Type.String({
    default: '',
    description: "password of the Sentinels themselves (requirepass in sentinel.conf), if they have one; the master's is REDIS_URL's",
  }),
  MEMORY_KEY_PREFIX: Type.String({ default: 'hermes:', description: 'prefix of every Redis key this service writes' }),
  REDIS_COMMAND_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 50, description: 'bound on one Redis command; a request fails (retryably) after it' }),
  MEMORY_TOKENIZER: Type.Union([Type.Literal('o200k_base'), Type.Literal('cl100k_base')], {
    default: 'o200k_base',
    description: 'encoding of the token count stored with each message (a context for a model of the other family recounts)',
  }),
  MEMORY_LOCK_LEASE_MS: Type.Integer({ default: 30_000, minimum: 1000, description: 'a session lock not renewed for this long lapses (its holder died)' }),
  MEMORY_TOOL_RESULT_MAX_TOKENS: Type.Integer({
    default: 2000,
    minimum: 50,
    description: 'tool results longer than this are truncated in context (full result via sessionMessage)',
  }),
  MEMORY_SUMMARY_TRIGGER_TOKENS: Type.Integer({
    default: 8000,
    minimum: 100,
    description: 'unsummarised tokens in a session that queue a background summary job',
  }),
  MEMORY_SUMMARY_KEEP_RECENT: Type.Integer({ default: 10, minimum: 0, description: 'latest messages a background summary leaves out (they stay verbatim)' }),
  MEMORY_SUMMARY_INPUT_TOKENS: Type.Integer({
    default: 6000,
    minimum: 500,
    description: 'new-message tokens per summariser call; more are folded in several calls',
  }),
  MEMORY_WORKING_TTL_MS: Type.Integer({
    default: 7 * 86_400_000,
    minimum: 60_000,
    description: "a task's working memory expires this long after its last write if never cleared",
  }),
});

export type MemoryConfig = ServiceContext<typeof settings.static>['config'];

/** Reads the memory service's settings (with the common ones) from `env`, defaults for the rest, as the service does at start. */
export function memoryConfig(env: Record<string, string> = {}): MemoryConfig {
  return serviceConfig({ service: 'memory', settings }, env);
}

/** Session tuning from the settings, as the service runs with it. */
export function memoryTuning(config: MemoryConfig): MemoryTuning {
  return {
    keyPrefix: config.MEMORY_KEY_PREFIX,
    encoding: config.MEMORY_TOKENIZER,
    lockLeaseMs: config.MEMORY_LOCK_LEASE_MS,
    toolResultMaxTokens: config.MEMORY_TOOL_RESULT_MAX_TOKENS,
    summaryTriggerTokens: config.MEMORY_SUMMARY_TRIGGER_TOKENS,
    summaryKeepRecent: config.MEMORY_SUMMARY_KEEP_RECENT,
    summaryInputTokens: config.MEMORY_SUMMARY_INPUT_TOKENS,
    workingTtlMs: config.MEMORY_WORKING_TTL_MS,
  };
}

/** The memory service: its settings, streams and wiring (main.ts hosts it). */
export const memoryService: HostServiceOptions<typeof settings> = {
  service: 'memory',
  // Extraction jobs and memory writes: a work queue this service both fills and drains.
  streams: ['memoryJobs'],
  // Where both consumers put the jobs they give up on (created by the dispatcher, or here when absent).
  uses: ['deadLetters', 'recordings'],
  consumers: ['memoryExtract', 'memoryWrites'],
  settings,
  start: async ({ bus, logger, config }) => {
    const redis = await connectRedis({ url: config.REDIS_URL, logger, commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS, sentinel: sentinelsOf(config) });
    const { llm, close } = await openLlmClient(config, await bus.kv('llmSemaphore'), { service: 'memory' });
    const embedder = createEmbedder(config, llm);
    const store = createVectorStore(config, embedder);
    await store.init();
    const memory = startMemoryService({
      bus,
      redis,
      llm,
      logger,
      tuning: memoryTuning(config),
      longTerm: { store, embedder, tuning: longTermTuning(config) },
    });
    await memory.longTerm?.ready;
    logger.info(
      { summarizer: llm.modelFor('summarizer'), embedder: embedder.name, store: config.QDRANT_URL ? 'qdrant' : 'embedded' },
      'memory serving sessions and long-term memory',
    );
    return {
      stop: async () => {
        await memory.stop();
        await store.close();
        await close();
        await closeRedis(redis);
      },
    };
  },
};
