import { Type } from '@sinclair/typebox';
import { hostService } from '@hermes/bus';
import { closeRedis, connectRedis } from './redis-client.js';
import { serveSessionHandlers } from './session-handlers.js';
import { SessionStore } from './session-store.js';

await hostService({
  service: 'memory',
  settings: Type.Object({
    REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379', description: 'Redis holding sessions' }),
    MEMORY_KEY_PREFIX: Type.String({ default: 'hermes:', description: 'prefix of every Redis key this service writes' }),
    REDIS_COMMAND_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 50, description: 'bound on one Redis command; a request fails (retryably) after it' }),
  }),
  start: async ({ bus, logger, config }) => {
    const redis = await connectRedis({ url: config.REDIS_URL, logger, commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS });
    const store = new SessionStore({ redis, keyPrefix: config.MEMORY_KEY_PREFIX });
    const subs = serveSessionHandlers({ bus, store });
    return {
      stop: async () => {
        await Promise.all(subs.map((sub) => sub.drain()));
        await closeRedis(redis);
      },
    };
  },
});
