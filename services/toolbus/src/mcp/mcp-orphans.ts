import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from '@hermes/telemetry';

/**
 * The guard every stdio MCP server runs under (bin/mcp-stdio-guard.mjs): it kills the server's
 * process group when the toolbus dies. The same path from src/ and dist/.
 */
export const STDIO_GUARD = fileURLToPath(new URL('../../bin/mcp-stdio-guard.mjs', import.meta.url));

/**
 * Kills the MCP servers a previous toolbus of this replica left running, as their guards recorded
 * them in `pidFile` ("<pid> <start time>" a line), then empties the file. A server outlives its
 * guard only when both were killed at once (a SIGKILL to the toolbus's process group); it could then
 * still finish a call that this toolbus takes over. The start time is compared, so a pid the system
 * has since given to another process is left alone. Returns the pids killed.
 */
export function killRecordedOrphans(pidFile: string, logger: Logger): number[] {
  let text = '';
  try {
    text = readFileSync(pidFile, 'utf8');
  } catch {
    // no file yet: nothing was recorded
  }
  const killed: number[] = [];
  for (const line of text.split('\n')) {
    const [pid, started] = line.trim().split(' ').map(Number);
    if (!pid || started === undefined || processStartTime(pid) !== started) continue;
    try {
      process.kill(-pid, 'SIGKILL'); // the server leads its own process group
      killed.push(pid);
    } catch (err) {
      logger.warn({ err, pid }, 'could not kill an orphaned MCP server');
    }
  }
  if (killed.length) logger.warn({ pids: killed, pid_file: pidFile }, 'killed MCP servers a previous toolbus left running');
  writeFileSync(pidFile, '');
  return killed;
}

/** Field 22 of /proc/<pid>/stat (clock ticks after boot); undefined when there is no such process. */
function processStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  } catch {
    return undefined;
  }
}
