import { Redis } from 'ioredis';
import type { Logger } from '@hermes/telemetry';

export interface RedisClientOptions {
  url: string;
  logger: Logger;
  /** Bound on one command, including a connection that hangs without closing. */
  commandTimeoutMs: number;
}

/**
 * Opens the Redis connection for request/reply work. While Redis is unreachable, commands fail at
 * once (callers get a retryable error) and ioredis keeps reconnecting in the background. Never
 * throws: a service started before Redis comes up anyway and recovers when Redis does.
 */
export async function connectRedis(opts: RedisClientOptions): Promise<Redis> {
  const { logger } = opts;
  const redis = new Redis(opts.url, {
    lazyConnect: true,
    connectionName: 'hermes-memory',
    // No offline queue and no resend: a queued or resent append could land after its caller was
    // told to retry (a duplicate), and a queue makes callers wait out their own timeouts.
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    // 0: commands in flight when the connection drops fail at once instead of after retries.
    maxRetriesPerRequest: 0,
    commandTimeout: opts.commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
  // Log state changes rather than every failed reconnect attempt (one per second while down).
  let down = false;
  redis.on('error', (err: Error) => {
    if (!down) logger.warn({ err: err.message }, 'Redis unavailable; reconnecting');
    down = true;
  });
  redis.on('ready', () => {
    logger.info(down ? 'Redis connection restored' : 'connected to Redis');
    down = false;
  });
  try {
    await redis.connect();
  } catch {
    // Already logged by the error listener; ioredis goes on reconnecting.
  }
  return redis;
}

/** Closes the connection politely when possible, at once otherwise (quit would fail while down). */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // fall through: the connection dropped while quitting
    }
  }
  redis.disconnect();
}
