import { ManagedProcess } from './managed-process.js';
import type { ExitStatus } from './managed-process.js';
import { trackResource, untrackResource } from './process-registry.js';
import { probeHttpStatus, waitUntilReady } from './readiness.js';

/** Options for {@link startChildService}. */
export interface ChildServiceOptions {
  /** Prefix for mirrored log lines and error messages. */
  name: string;
  /** Absolute path of a built JS file, run with the current Node binary. */
  entry: string;
  /** Merged over `process.env`. */
  env?: Record<string, string>;
  args?: string[];
  /** When set, wait until `GET http://127.0.0.1:<healthPort>/readyz` answers 200. */
  healthPort?: number;
  /** How long to wait for /readyz. Default 20 s. */
  readyTimeoutMs?: number;
}

/** A Node process started by {@link startChildService}. */
export interface ChildService {
  readonly name: string;
  readonly pid: number;
  /** stdout and stderr, one entry per line, in arrival order (mirrored to stderr when HERMES_TEST_VERBOSE is set). */
  readonly logs: string[];
  /** Resolves (never rejects) when the process has exited. */
  readonly exited: Promise<ExitStatus>;
  /** Resolves with the first log line, past or future, matching `pattern`; rejects on timeout (default 10 s) or exit. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** SIGSTOP: alive but frozen (heartbeats and acks stop) until resume(); resolves once it is stopped. */
  pause(): Promise<void>;
  /** SIGCONT after pause(). */
  resume(): void;
  /** SIGTERM and wait; SIGKILL if still alive after `timeoutMs` (default 5 s). */
  stop(timeoutMs?: number): Promise<ExitStatus>;
}

const DEFAULT_READY_TIMEOUT_MS = 20_000;
const DEFAULT_LOG_WAIT_MS = 10_000;
const DEFAULT_STOP_TIMEOUT_MS = 5_000;

function childNodeArgs(): string[] {
  return (process.env['HERMES_CHILD_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
}

/** Runs `node <entry> ...args` and, given `healthPort`, resolves once its /readyz answers 200. */
export async function startChildService(options: ChildServiceOptions): Promise<ChildService> {
  const proc = await ManagedProcess.spawn({
    name: options.name,
    command: process.execPath,
    // Node flags for every child, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a bench run
    // (NODE_OPTIONS refuses --cpu-prof).
    args: [...childNodeArgs(), options.entry, ...(options.args ?? [])],
    env: { ...process.env, ...options.env },
  });
  const service: ChildService = {
    name: options.name,
    pid: proc.pid,
    logs: proc.logs,
    exited: proc.exited,
    waitForLog: (pattern, timeoutMs = DEFAULT_LOG_WAIT_MS) => proc.waitForLog(pattern, timeoutMs),
    kill: async () => {
      await proc.kill();
    },
    pause: () => proc.pause(),
    resume: () => proc.resume(),
    stop: (timeoutMs = DEFAULT_STOP_TIMEOUT_MS) => proc.terminate(timeoutMs),
  };
  trackResource(service);
  void proc.exited.then(() => untrackResource(service));

  const { healthPort } = options;
  if (healthPort !== undefined) {
    try {
      await waitUntilReady({
        proc,
        timeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
        isReady: async () => (await probeHttpStatus(healthPort, '/readyz')) === 200,
      });
    } catch (error) {
      await proc.kill();
      throw error;
    }
  }
  return service;
}
