import type { HermesStack } from './hermes-stack.js';
import type { OrphanGuard } from './orphan-guard.js';

export interface StopOnSignalsOptions {
  stack: HermesStack;
  guard: OrphanGuard;
  /** Bound on the whole graceful stop; past it every child still running gets SIGKILL and the runner exits 1. */
  deadlineMs: number;
  /** When set: the pid that started the runner (scripts/up.mjs); should it go away, the runner stops too. */
  parentPid?: number | undefined;
  say(line: string): void;
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
const PARENT_POLL_MS = 1_000;

/** The pids of every process the stack started (the scripted model runs inside the runner). */
export function childPids(stack: HermesStack): number[] {
  return [...[...stack.services.values()].map((s) => s.pid), ...(stack.nats ? [stack.nats.pid] : []), ...(stack.redis ? [stack.redis.pid] : [])];
}

/**
 * SIGTERM, SIGINT or SIGHUP sent to the runner's pid alone (not only a Ctrl-C to the whole process
 * group) stops the stack: the services get SIGTERM, then nats-server and redis-server, each
 * killed if it outlasts its bound, then the runner exits. The guard is told who runs, so a runner
 * killed with SIGKILL leaves nothing behind either.
 */
export function stopOnSignals(o: StopOnSignalsOptions): { readonly stopping: boolean } {
  const running = new Set(childPids(o.stack));
  o.guard.watch([...running]);
  for (const svc of o.stack.services.values()) {
    void svc.exited.then(() => {
      // A pid that exited may be reused; the guard must not signal whoever gets it next.
      running.delete(svc.pid);
      o.guard.watch([...running]);
    });
  }
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    o.say(`\n${reason}: stopping...`);
    const deadline = setTimeout(() => {
      for (const pid of childPids(o.stack)) kill(pid);
      o.guard.disarm();
      o.say(`not stopped within ${o.deadlineMs} ms; killed what was left.`);
      process.exit(1);
    }, o.deadlineMs);
    await o.stack.stop().catch((err: Error) => o.say(`stopping failed: ${err.message}`));
    clearTimeout(deadline);
    o.guard.disarm();
    o.say('stopped.');
    process.exit(0);
  };
  for (const signal of SIGNALS) process.on(signal, () => void stop(signal));
  if (o.parentPid !== undefined) {
    const parentPid = o.parentPid;
    // Orphaned (up.mjs was killed, even with SIGKILL): nobody is left to stop the stack but us.
    setInterval(() => {
      if (process.ppid !== parentPid) void stop('parent process gone');
    }, PARENT_POLL_MS).unref();
  }
  return {
    get stopping() {
      return stopping;
    },
  };
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
