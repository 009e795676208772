import { probeTcp } from './readiness.js';
import { ServerProcess, serverHandle } from './server-process.js';
import type { ServerHandle, ServerRecipe } from './server-process.js';

/** Options for {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Port to listen on. Default: a free port. */
  port?: number;
  /** Leave the temp working dir in place after stop(). */
  keepDir?: boolean;
  /** Extra `redis-server` command-line arguments, e.g. `['--maxmemory', '10mb']`. */
  args?: string[];
  /** How long to wait for the server to answer PING. Default 15 s. */
  startTimeoutMs?: number;
}

/** A running redis-server started by {@link startRedisServer}: `url` is `redis://127.0.0.1:<port>`; data is not persisted. */
export type RedisServerHandle = ServerHandle;

const PING = '*1\r\n$4\r\nPING\r\n';

/** Starts `redis-server` from PATH on 127.0.0.1, without persistence, and resolves once it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  const recipe: ServerRecipe = {
    name: 'redis-server',
    command: 'redis-server',
    async prepare() {},
    args({ port, dir }) {
      return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir, ...(options.args ?? [])];
    },
    // As with nats: the ready line proves this process is listening, +PONG that it serves clients.
    async isReady({ port }, proc) {
      if (!proc.logs.some((line) => line.includes('Ready to accept connections'))) return false;
      return probeTcp({ port, send: PING, accept: (received) => received.startsWith('+PONG\r\n') });
    },
  };
  const server = await ServerProcess.launch(recipe, options);
  return serverHandle(server, `redis://127.0.0.1:${server.port}`);
}
