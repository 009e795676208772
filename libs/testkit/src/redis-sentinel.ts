import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestkitError } from './errors.js';
import { eventually } from './eventually.js';
import { probeTcp } from './readiness.js';
import { redisCommand } from './redis-command.js';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';
import { ServerProcess, serverHandle, type ServerHandle, type ServerRecipe } from './server-process.js';

/** Options for {@link startRedisSentinelGroup}. */
export interface RedisSentinelGroupOptions {
  /** The master group's name, as clients ask Sentinel for it. Default `hermes`. */
  masterName?: string;
  /** Replicas of the master. Default 1 (the least a failover needs). */
  replicas?: number;
  /** How long the master may not answer before Sentinel holds it down. Default 1000 ms (Redis's is 30 s). */
  downAfterMs?: number;
  /** How long to wait for every process and for Sentinel to see every replica. Default 30 s. */
  startTimeoutMs?: number;
}

/** A master, its replicas and one Sentinel watching them, on loopback: each a redis-server process without persistence. */
export interface RedisSentinelGroupHandle {
  readonly masterName: string;
  /** `nodes[0]` is the first master, the others its replicas; which one is master now, Sentinel says ({@link masterPort}). */
  readonly nodes: readonly RedisServerHandle[];
  readonly sentinel: ServerHandle;
  /** The Sentinel addresses, `host:port,...`, as `REDIS_SENTINELS` takes them. */
  readonly sentinels: string;
  /** The port of the master Sentinel names now. */
  masterPort(): Promise<number>;
  /** Resolves once every replica acknowledged the writes the master has taken so far (Redis `WAIT`). */
  waitForReplicas(timeoutMs?: number): Promise<void>;
  /** Resolves with the new master's port once Sentinel names another master than `formerPort`. */
  waitForFailover(formerPort: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/** Sentinel did not see the group, or no failover came within the wait. */
export class SentinelGroupError extends TestkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TESTKIT_SENTINEL_GROUP', message, options);
  }
}

/**
 * Starts a master, `replicas` replicas of it and a redis-server in `--sentinel` mode monitoring
 * them (quorum 1: a single Sentinel decides alone, enough to test a client's failover, not for
 * production), and resolves once Sentinel has seen every replica, so a failover can promote one.
 */
export async function startRedisSentinelGroup(options: RedisSentinelGroupOptions = {}): Promise<RedisSentinelGroupHandle> {
  const masterName = options.masterName ?? 'hermes';
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const replicaCount = options.replicas ?? 1;
  const nodes: RedisServerHandle[] = [];
  let sentinel: ServerProcess | undefined;
  const stop = async () => {
    await Promise.all([sentinel?.stop(), ...nodes.map((n) => n.stop())]);
  };
  try {
    const master = await startRedisServer({ startTimeoutMs });
    nodes.push(master);
    for (let i = 0; i < replicaCount; i++) {
      nodes.push(await startRedisServer({ startTimeoutMs, args: ['--replicaof', '127.0.0.1', String(master.port)] }));
    }
    sentinel = await ServerProcess.launch(
      sentinelRecipe({ masterName, masterPort: master.port, replicas: replicaCount, downAfterMs: options.downAfterMs ?? 1000 }),
      { startTimeoutMs },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  const sentinelProcess = sentinel;
  const masterPort = async (): Promise<number> => {
    const reply = await redisCommand(sentinelProcess.port, 'SENTINEL', 'get-master-addr-by-name', masterName);
    const port = /\r\n\$\d+\r\n(\d+)\r\n/.exec(reply)?.[1];
    if (!port) throw new SentinelGroupError(`Sentinel does not know master ${masterName}: ${JSON.stringify(reply)}`);
    return Number(port);
  };
  return {
    masterName,
    nodes,
    sentinel: serverHandle(sentinelProcess, `redis://127.0.0.1:${sentinelProcess.port}`),
    sentinels: `127.0.0.1:${sentinelProcess.port}`,
    masterPort,
    async waitForReplicas(timeoutMs = 10_000) {
      const port = await masterPort();
      let acked = -1;
      // WAIT in short rounds (each well inside redisCommand's own bound): a replica still in its
      // first sync acknowledges nothing until that sync is done.
      await eventually(
        async () => {
          acked = Number(/^:(\d+)/.exec(await redisCommand(port, 'WAIT', String(replicaCount), '1000'))?.[1] ?? -1);
          return acked >= replicaCount;
        },
        timeoutMs,
        () => `${replicaCount} replicas to acknowledge the master's writes (last: ${acked})`,
      ).catch((err: unknown) => {
        throw new SentinelGroupError(`${acked} of ${replicaCount} replicas acknowledged the master's writes within ${timeoutMs} ms`, { cause: err });
      });
    },
    async waitForFailover(formerPort, timeoutMs = 30_000) {
      // Sentinel holds the master down after down-after-milliseconds, then elects itself and
      // promotes a replica: a few seconds; errors while it is busy count as "not yet".
      return eventually(
        async () => {
          const port = await masterPort().catch(() => undefined);
          return port !== undefined && port !== formerPort ? port : undefined;
        },
        timeoutMs,
        () => `a failover away from port ${formerPort}; Sentinel's last lines:\n${sentinelProcess.logs.slice(-10).join('\n')}`,
      );
    },
    stop,
  };
}

function sentinelRecipe(o: { masterName: string; masterPort: number; replicas: number; downAfterMs: number }): ServerRecipe {
  const configFile = (dir: string) => join(dir, 'sentinel.conf');
  return {
    name: 'redis-sentinel',
    command: 'redis-server',
    // Sentinel rewrites its config file as it learns the group, so it must be a writable file of its own.
    async prepare({ dir }) {
      await writeFile(
        configFile(dir),
        [
          `sentinel monitor ${o.masterName} 127.0.0.1 ${o.masterPort} 1`,
          `sentinel down-after-milliseconds ${o.masterName} ${o.downAfterMs}`,
          // After a failed failover Sentinel waits this long before another try (default 3 min).
          `sentinel failover-timeout ${o.masterName} 10000`,
          '',
        ].join('\n'),
      );
    },
    args({ port, dir }) {
      return [configFile(dir), '--sentinel', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no'];
    },
    // It monitors the master, has seen every replica (from the master's INFO), and answers PING.
    async isReady({ port }, proc) {
      if (!proc.logs.some((line) => line.includes(`+monitor master ${o.masterName}`))) return false;
      if (proc.logs.filter((line) => line.includes('+slave slave')).length < o.replicas) return false;
      return probeTcp({ port, send: '*1\r\n$4\r\nPING\r\n', accept: (received) => received.startsWith('+PONG\r\n') });
    },
  };
}
