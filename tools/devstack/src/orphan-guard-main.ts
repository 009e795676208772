// The dev runner's orphan guard (see orphan-guard.ts): keeps the last list of pids it was sent on
// stdin, one JSON line `{"pids":[...]}` each, and when stdin closes (the runner exited, however it
// died) stops whatever of that list still runs: SIGTERM, then SIGKILL after a grace period.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

const GRACE_MS = 5_000;
let pids: number[] = [];

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  try {
    const message = JSON.parse(line) as { pids?: unknown };
    if (Array.isArray(message.pids)) pids = message.pids.filter((p): p is number => Number.isInteger(p) && p > 1);
  } catch {
    // Only the runner writes here; a garbled line is ignored rather than ending the guard.
  }
});
lines.on('close', () => void reap(pids));

async function reap(targets: readonly number[]): Promise<void> {
  const isRunning = (pid: number) => send(pid, 0);
  const running = targets.filter(isRunning);
  for (const pid of running) send(pid, 'SIGTERM');
  const deadline = Date.now() + GRACE_MS;
  while (running.some(isRunning) && Date.now() < deadline) await sleep(100);
  for (const pid of running.filter(isRunning)) send(pid, 'SIGKILL');
  process.exit(0);
}

/** Sends `sig` (0 only asks whether the process exists); false when there is no such process (any more). */
function send(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
