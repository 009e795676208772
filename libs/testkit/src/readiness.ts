import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProcessStartError } from './errors.js';
import { describeExit } from './managed-process.js';
import type { ManagedProcess } from './managed-process.js';

const POLL_INTERVAL_MS = 50;
const PROBE_TIMEOUT_MS = 1_000;

/**
 * Polls `isReady` until it holds, failing fast when the process exits first and with the log
 * tail either way, because "did not start" is useless without the server's own explanation.
 */
export async function waitUntilReady(options: {
  proc: ManagedProcess;
  isReady: () => Promise<boolean>;
  timeoutMs: number;
  logTailLines?: number;
}): Promise<void> {
  const { proc, isReady, timeoutMs } = options;
  const tailLines = options.logTailLines ?? 30;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.running) await failBecauseExited(proc, tailLines);
    if (await isReady()) return;
    if (!proc.running) await failBecauseExited(proc, tailLines);
    if (Date.now() >= deadline) {
      throw new ProcessStartError({
        process: proc.name,
        reason: `not ready after ${timeoutMs} ms (process still running, pid ${proc.pid})`,
        logTail: proc.tail(tailLines),
      });
    }
    await Promise.race([sleep(POLL_INTERVAL_MS), proc.exited]);
  }
}

async function failBecauseExited(proc: ManagedProcess, tailLines: number): Promise<never> {
  // Resolving `exited` waits for stdio to drain, so the tail includes the server's last words.
  const status = await proc.exited;
  throw new ProcessStartError({ process: proc.name, reason: `process exited before it was ready (${describeExit(status)})`, logTail: proc.tail(tailLines) });
}

/** Connects to 127.0.0.1:port, optionally writes `send`, and resolves true once `accept` holds on what came back. */
export async function probeTcp(options: { port: number; send?: string; accept: (received: string) => boolean }): Promise<boolean> {
  return new Promise((resolve) => {
    let received = '';
    const socket = connect({ port: options.port, host: '127.0.0.1' });
    const done = (ready: boolean): void => {
      socket.destroy();
      resolve(ready);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('connect', () => {
      if (options.send !== undefined) socket.write(options.send);
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (options.accept(received)) done(true);
    });
  });
}

/** Resolves the HTTP status of GET http://127.0.0.1:port/path, or undefined when nothing answers. */
export async function probeHttpStatus(port: number, path: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', timeout: PROBE_TIMEOUT_MS, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(undefined));
    req.end();
  });
}
