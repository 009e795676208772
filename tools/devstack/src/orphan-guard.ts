import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What {@link startOrphanGuard} returns. */
export interface OrphanGuard {
  /** The processes to stop should the runner die without stopping them; replaces the last list. */
  watch(pids: readonly number[]): void;
  /** The runner stopped its children itself: the guard exits without touching anything. */
  disarm(): void;
}

const entry = fileURLToPath(new URL('./orphan-guard-main.js', import.meta.url));

/**
 * Starts the orphan guard: a small process of its own (its own session, so a Ctrl-C or hang-up
 * meant for the runner does not reach it) reading the runner's list of children from a pipe.
 * A runner killed with SIGKILL cannot stop anything, and nats-server and redis-server do not
 * notice their parent is gone; but the pipe closes with the runner's last file descriptor, and
 * the guard then stops every process of the list (SIGTERM, SIGKILL after 5 s).
 */
export function startOrphanGuard(): OrphanGuard {
  const guard: ChildProcess = spawn(process.execPath, [entry], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  // A guard that died is no reason to take the runner down; its children are then only unguarded.
  guard.on('error', () => undefined);
  guard.stdin?.on('error', () => undefined);
  guard.unref();
  const send = (pids: readonly number[]) => guard.stdin?.write(`${JSON.stringify({ pids })}\n`);
  return {
    watch: (pids) => void send(pids),
    disarm: () => {
      send([]);
      guard.stdin?.end();
    },
  };
}
