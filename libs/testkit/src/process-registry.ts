import { rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

/** Anything started by the kit that `cleanupAll` must stop. */
export interface Stoppable {
  stop(): Promise<unknown>;
}

const resources = new Set<Stoppable>();
const liveChildren = new Set<ChildProcess>();
const dirsToRemoveAtExit = new Set<string>();
let exitHooksInstalled = false;

export function trackResource(resource: Stoppable): void {
  resources.add(resource);
}

export function untrackResource(resource: Stoppable): void {
  resources.delete(resource);
}

export function trackChild(child: ChildProcess): void {
  installExitHooks();
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
}

export function removeDirAtExit(dir: string): void {
  dirsToRemoveAtExit.add(dir);
}

export function keepDirAtExit(dir: string): void {
  dirsToRemoveAtExit.delete(dir);
}

/** Stops every server, child service and scripted LLM started by the kit (for `afterAll`). */
export async function cleanupAll(): Promise<void> {
  const results = await Promise.allSettled([...resources].map((resource) => resource.stop()));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  if (failures.length > 0) throw new AggregateError(failures, `cleanupAll: ${failures.length} resource(s) failed to stop`);
}

function killLeftoversSync(): void {
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone; nothing to do.
    }
  }
  liveChildren.clear();
  for (const dir of dirsToRemoveAtExit) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort: a leftover temp dir is harmless, a throwing exit hook is not.
    }
  }
  dirsToRemoveAtExit.clear();
}

// 'exit' alone is not enough: vitest stops its fork workers with SIGTERM, and a signal's default
// action ends the process without emitting 'exit'. When nobody else listens for the signal we
// clean up and re-raise it so the default action still happens; when somebody does (a dev runner
// with its own graceful shutdown), we leave the shutdown to them and rely on the 'exit' hook.
function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killLeftoversSync);
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      if (process.listenerCount(signal) > 1) return;
      killLeftoversSync();
      process.off(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}
