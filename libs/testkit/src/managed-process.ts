import { readFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { ProcessStartError, WaitForLogError } from './errors.js';
import { trackChild } from './process-registry.js';

/** How a process ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Older lines are dropped so a long-running dev process does not grow without bound. */
  maxLogLines?: number;
}

const DEFAULT_MAX_LOG_LINES = 5_000;
// After 'exit', stdio normally closes at once; a grandchild holding the pipes must not stall us.
const STDIO_CLOSE_GRACE_MS = 500;

/** A spawned process whose output is kept in memory, one entry per line. */
export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logs: string[] = [];
  readonly exited: Promise<ExitStatus>;
  #child: ChildProcess;
  #exitStatus: ExitStatus | undefined;
  #lineListeners = new Set<(line: string) => void>();
  #maxLogLines: number;
  #mirror: boolean;

  private constructor(name: string, child: ChildProcess, pid: number, maxLogLines: number) {
    this.name = name;
    this.#child = child;
    this.pid = pid;
    this.#maxLogLines = maxLogLines;
    this.#mirror = Boolean(process.env['HERMES_TEST_VERBOSE']);
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) this.#collectLines(stream);
    }
    this.exited = new Promise<ExitStatus>((resolve) => {
      const settle = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.#exitStatus) return;
        this.#exitStatus = { code, signal };
        resolve(this.#exitStatus);
      };
      child.once('close', settle);
      child.once('exit', (code, signal) => {
        setTimeout(() => settle(code, signal), STDIO_CLOSE_GRACE_MS).unref();
      });
    });
  }

  /** Spawns the process; rejects if the OS could not start it at all (e.g. binary not on PATH). */
  static async spawn(options: ManagedProcessOptions): Promise<ManagedProcess> {
    const child = spawn(options.command, [...options.args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) {
      const [error] = (await once(child, 'error')) as [Error];
      throw new ProcessStartError({ process: options.name, reason: `could not spawn ${options.command}: ${error.message}`, logTail: [] }, { cause: error });
    }
    // A later 'error' (e.g. a failed kill) must not crash the test run as an unhandled event.
    child.on('error', () => undefined);
    trackChild(child);
    return new ManagedProcess(options.name, child, child.pid, options.maxLogLines ?? DEFAULT_MAX_LOG_LINES);
  }

  get running(): boolean {
    return this.#exitStatus === undefined;
  }

  get exitStatus(): ExitStatus | undefined {
    return this.#exitStatus;
  }

  tail(count: number): string[] {
    return this.logs.slice(-count);
  }

  /**
   * SIGSTOP: the process stays alive but runs nothing (a stalled VM, a GC pause, a debugger) until
   * resume(). Resolves once the kernel shows it stopped: the signal lands asynchronously, and a
   * process busy on another core can otherwise still answer a request sent right after.
   */
  async pause(): Promise<void> {
    if (!this.running) return;
    this.#child.kill('SIGSTOP');
    const deadline = Date.now() + 2000;
    while (Date.now() < deadline && this.running && !(await isStopped(this.pid))) await new Promise((r) => setTimeout(r, 5));
  }

  /** SIGCONT after pause(). */
  resume(): void {
    if (this.running) this.#child.kill('SIGCONT');
  }

  /** SIGKILL, then wait for the exit. */
  async kill(): Promise<ExitStatus> {
    // SIGKILL ends a paused (SIGSTOPped) process too.
    if (this.running) this.#child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM, then SIGKILL if the process is still alive after `timeoutMs`. */
  async terminate(timeoutMs: number): Promise<ExitStatus> {
    if (!this.running) return this.exited;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (this.running) this.#child.kill('SIGKILL');
    }, timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves with the first line (already logged or still to come) that matches `pattern`. */
  async waitForLog(pattern: RegExp, timeoutMs: number): Promise<string> {
    const test = (line: string): boolean => {
      pattern.lastIndex = 0;
      return pattern.test(line);
    };
    const existing = this.logs.find(test);
    if (existing !== undefined) return existing;
    return new Promise<string>((resolve, reject) => {
      const finish = (outcome: { line: string } | { reason: string }): void => {
        clearTimeout(timer);
        this.#lineListeners.delete(onLine);
        if ('line' in outcome) resolve(outcome.line);
        else reject(new WaitForLogError({ process: this.name, pattern, reason: outcome.reason, logTail: this.tail(30) }));
      };
      const onLine = (line: string): void => {
        if (test(line)) finish({ line });
      };
      const timer = setTimeout(() => finish({ reason: `timed out after ${timeoutMs} ms` }), timeoutMs);
      this.#lineListeners.add(onLine);
      void this.exited.then((status) => finish({ reason: `process exited first (${describeExit(status)})` }));
    });
  }

  #collectLines(stream: Readable): void {
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) => {
      this.logs.push(line);
      if (this.logs.length > this.#maxLogLines) this.logs.splice(0, this.logs.length - this.#maxLogLines);
      if (this.#mirror) process.stderr.write(`[${this.name}] ${line}\n`);
      for (const listener of this.#lineListeners) listener(line);
    });
  }
}

export function describeExit(status: ExitStatus): string {
  return status.signal ? `killed by ${status.signal}` : `exit code ${String(status.code)}`;
}

/** Whether /proc shows the process stopped by a signal (state T). */
async function isStopped(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
  } catch {
    return false;
  }
}
