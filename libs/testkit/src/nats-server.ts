import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { probeTcp } from './readiness.js';
import { ServerProcess, serverHandle } from './server-process.js';
import type { ServerContext, ServerHandle, ServerRecipe } from './server-process.js';

/** Options for {@link startNatsServer}. */
export interface NatsServerOptions {
  /** Enable JetStream with a store inside the server's temp dir. Default true. */
  jetstream?: boolean;
  /**
   * Extra nats-server configuration appended to a generated config file (e.g. `authorization` or
   * `accounts` blocks). The kit already writes `listen` and, unless `jetstream: false`, a
   * `jetstream { store_dir }` block; do not repeat those, and do not set `logfile`.
   */
  configText?: string;
  /** Port to listen on. Default: a free port. */
  port?: number;
  /** Leave the temp dir (config, JetStream store) in place after stop(), for post-mortems. */
  keepDir?: boolean;
  /** How long to wait for "Server is ready". Default 15 s. */
  startTimeoutMs?: number;
  /**
   * A further log line the server must print before it counts as ready. A cluster node logs
   * "Server is ready" before it binds its route port, and exits if that port is taken.
   */
  readyLogLine?: RegExp;
}

/**
 * A running nats-server started by {@link startNatsServer}: `url` is `nats://127.0.0.1:<port>`,
 * `dir` holds the config file and the JetStream store (`<dir>/js`), which survives kill() and
 * restart(), so JetStream data comes back.
 */
export type NatsServerHandle = ServerHandle;

/** Starts `nats-server` from PATH on 127.0.0.1 and resolves once it is ready for clients. */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const jetstream = options.jetstream ?? true;
  const recipe: ServerRecipe = {
    name: 'nats-server',
    command: 'nats-server',
    async prepare({ port, dir }) {
      if (jetstream) await mkdir(storeDir(dir), { recursive: true });
      if (options.configText !== undefined) await writeFile(configPath(dir), renderConfig({ port, dir }, jetstream, options.configText));
    },
    args({ port, dir }) {
      if (options.configText !== undefined) return ['-c', configPath(dir)];
      return ['-a', '127.0.0.1', '-p', String(port), ...(jetstream ? ['-js', '-sd', storeDir(dir)] : [])];
    },
    // The ready line proves that this process (not whoever else may hold the port) is listening;
    // the INFO greeting, that the port already serves clients.
    async isReady({ port }, proc) {
      if (!proc.logs.some((line) => line.includes('Server is ready'))) return false;
      if (options.readyLogLine && !proc.logs.some((line) => options.readyLogLine!.test(line))) return false;
      return probeTcp({ port, accept: (received) => received.startsWith('INFO ') });
    },
  };
  const server = await ServerProcess.launch(recipe, options);
  return serverHandle(server, `nats://127.0.0.1:${server.port}`);
}

function storeDir(dir: string): string {
  return join(dir, 'js');
}

function configPath(dir: string): string {
  return join(dir, 'nats-server.conf');
}

function renderConfig(context: ServerContext, jetstream: boolean, configText: string): string {
  const lines = [`listen: ${JSON.stringify(`127.0.0.1:${context.port}`)}`];
  if (jetstream) lines.push(`jetstream { store_dir: ${JSON.stringify(storeDir(context.dir))} }`);
  lines.push(configText, '');
  return lines.join('\n');
}
