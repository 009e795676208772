import { readFileSync } from 'node:fs';

/**
 * Whether `pid` is a live process. Zombies count as dead: a server orphaned by a dead parent is
 * reparented to init, and where init does not reap (some containers) it lingers as a zombie that
 * `kill(pid, 0)` still reports.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // Format: "pid (comm) state ..."; comm may contain spaces, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}
