import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessStartError } from './errors.js';
import { freePort } from './free-port.js';
import { ManagedProcess } from './managed-process.js';
import { keepDirAtExit, removeDirAtExit, trackResource, untrackResource } from './process-registry.js';
import { waitUntilReady } from './readiness.js';

/** What differs between nats-server and redis-server; everything else is shared. */
export interface ServerRecipe {
  name: string;
  command: string;
  /** Writes config files or creates sub-directories; runs before every (re)start, since stop() may have removed `dir`. */
  prepare(context: ServerContext): Promise<void>;
  args(context: ServerContext): string[];
  isReady(context: ServerContext, proc: ManagedProcess): Promise<boolean>;
}

export interface ServerContext {
  port: number;
  dir: string;
}

export interface ServerLaunchOptions {
  port?: number | undefined;
  keepDir?: boolean | undefined;
  startTimeoutMs?: number | undefined;
}

const DEFAULT_START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const PORT_CLASH_ATTEMPTS = 3;

/** A server process that can be killed and started again on the same port with the same data directory. */
export class ServerProcess {
  readonly port: number;
  readonly dir: string;
  #recipe: ServerRecipe;
  #keepDir: boolean;
  #startTimeoutMs: number;
  #proc: ManagedProcess | undefined;

  private constructor(recipe: ServerRecipe, context: ServerContext, options: ServerLaunchOptions) {
    this.#recipe = recipe;
    this.port = context.port;
    this.dir = context.dir;
    this.#keepDir = options.keepDir ?? false;
    this.#startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  }

  static async launch(recipe: ServerRecipe, options: ServerLaunchOptions): Promise<ServerProcess> {
    const dir = await mkdtemp(join(tmpdir(), `hermes-${recipe.name}-`));
    // freePort() cannot reserve the port, so a chosen port may be taken before the server binds it;
    // a caller-chosen port is the caller's business and is not retried.
    const attempts = options.port === undefined ? PORT_CLASH_ATTEMPTS : 1;
    for (let attempt = 1; ; attempt++) {
      const port = options.port ?? (await freePort());
      const server = new ServerProcess(recipe, { port, dir }, options);
      try {
        await server.#start();
        return server;
      } catch (error) {
        untrackResource(server);
        const clash = error instanceof ProcessStartError && /address already in use/i.test(error.message);
        if (!clash || attempt >= attempts) {
          keepDirAtExit(dir);
          await rm(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  get pid(): number {
    if (!this.#proc) throw new Error(`${this.#recipe.name} was never started`);
    return this.#proc.pid;
  }

  get running(): boolean {
    return this.#proc?.running ?? false;
  }

  get logs(): readonly string[] {
    return this.#proc?.logs ?? [];
  }

  async stop(): Promise<void> {
    await this.#proc?.terminate(STOP_TIMEOUT_MS);
    untrackResource(this);
    if (!this.#keepDir) {
      await rm(this.dir, { recursive: true, force: true });
      keepDirAtExit(this.dir);
    }
  }

  async kill(): Promise<void> {
    await this.#proc?.kill();
  }

  async pause(): Promise<void> {
    await this.#proc?.pause();
  }

  resume(): void {
    this.#proc?.resume();
  }

  async restart(): Promise<void> {
    await this.#proc?.terminate(STOP_TIMEOUT_MS);
    await this.#start();
  }

  async #start(): Promise<void> {
    const context: ServerContext = { port: this.port, dir: this.dir };
    await this.#recipe.prepare(context);
    trackResource(this);
    if (!this.#keepDir) removeDirAtExit(this.dir);
    const proc = await ManagedProcess.spawn({ name: this.#recipe.name, command: this.#recipe.command, args: this.#recipe.args(context) });
    this.#proc = proc;
    try {
      await waitUntilReady({ proc, timeoutMs: this.#startTimeoutMs, isReady: () => this.#recipe.isReady(context, proc) });
    } catch (error) {
      // Still tracked, so a failed restart() is cleaned up by stop() or cleanupAll().
      await proc.kill();
      throw error;
    }
  }
}

/** What every server the kit starts offers: where it is, its output, and its lifecycle. */
export interface ServerHandle {
  readonly url: string;
  readonly port: number;
  /** Temp dir of the server (config, data). */
  readonly dir: string;
  /** Pid of the current process; changes on restart(). */
  readonly pid: number;
  /** Output of the current process, one entry per line. */
  readonly logs: readonly string[];
  /** SIGTERM, wait for exit, remove the temp dir unless `keepDir`. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  /** SIGSTOP: the server holds its connections but answers nothing until resume(); resolves once it is stopped. */
  pause(): Promise<void>;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Start again on the same port (stopping first if still running). */
  restart(): Promise<void>;
}

/** The handle of a launched server, reached at `url`. */
export function serverHandle(server: ServerProcess, url: string): ServerHandle {
  return {
    url,
    port: server.port,
    dir: server.dir,
    get pid() {
      return server.pid;
    },
    get logs() {
      return server.logs;
    },
    stop: () => server.stop(),
    kill: () => server.kill(),
    pause: () => server.pause(),
    resume: () => server.resume(),
    restart: () => server.restart(),
  };
}
