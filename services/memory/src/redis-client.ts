import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '@hermes/telemetry';

/** Where to find the master through Redis Sentinel. */
export interface SentinelSettings {
  sentinels: { host: string; port: number }[];
  /** The master group's name in the Sentinels' configuration. */
  name: string;
  /** The Sentinels' own password; the master's comes from the URL. */
  password?: string;
}

export interface RedisClientOptions {
  /** The server, or with `sentinel` only the credentials and db (the master's address is the Sentinels'). */
  url: string;
  logger: Logger;
  /** Bound on one command, including a connection that hangs without closing. */
  commandTimeoutMs: number;
  sentinel?: SentinelSettings | undefined;
}

/** What REDIS_SENTINELS accepts: empty, or host:port entries (host name or IPv4) separated by commas. */
export const SENTINEL_LIST_PATTERN = '^$|^[A-Za-z0-9._-]+:[0-9]{1,5}(,[A-Za-z0-9._-]+:[0-9]{1,5})*$';

/** The Sentinel settings of a configuration, or undefined when REDIS_SENTINELS is empty (the settings' pattern already checked its form). */
export function sentinelsOf(config: { REDIS_SENTINELS: string; REDIS_SENTINEL_NAME: string; REDIS_SENTINEL_PASSWORD: string }): SentinelSettings | undefined {
  if (config.REDIS_SENTINELS === '') return undefined;
  const sentinels = config.REDIS_SENTINELS.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
  });
  return { sentinels, name: config.REDIS_SENTINEL_NAME, ...(config.REDIS_SENTINEL_PASSWORD ? { password: config.REDIS_SENTINEL_PASSWORD } : {}) };
}

/**
 * Through Sentinel: ask the Sentinels for the master, reconnect the moment they announce a
 * failover (+switch-master), and drop a connection that meets a demoted master (READONLY) so the
 * next one asks again. The failing command is not resent (it fails retryably, as while Redis is down).
 */
function sentinelOptions(s: SentinelSettings): RedisOptions {
  return {
    sentinels: s.sentinels,
    name: s.name,
    ...(s.password ? { sentinelPassword: s.password } : {}),
    failoverDetector: true,
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
  };
}

/**
 * Opens the Redis connection for request/reply work. While Redis is unreachable, commands fail at
 * once (callers get a retryable error) and ioredis keeps reconnecting in the background. Never
 * throws: a service started before Redis comes up anyway and recovers when Redis does. With
 * `sentinel`, the same holds through a failover: commands fail (retryably) until the promoted
 * replica is the master the Sentinels name.
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
    ...(opts.sentinel ? sentinelOptions(opts.sentinel) : {}),
  });
  // Log state changes rather than every failed reconnect attempt (one per second while down).
  let down = false;
  redis.on('error', (err: Error) => {
    if (!down) logger.warn({ err: err.message }, 'Redis unavailable; reconnecting');
    down = true;
  });
  const where = opts.sentinel ? { sentinels: opts.sentinel.sentinels.map((a) => `${a.host}:${a.port}`), master: opts.sentinel.name } : {};
  redis.on('ready', () => {
    logger.info(where, down ? 'Redis connection restored' : 'connected to Redis');
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
