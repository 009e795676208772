// Runs one MCP stdio server for a toolbus and makes the server die with that toolbus.
//
// Node has no prctl(PR_SET_PDEATHSIG): a toolbus killed with SIGKILL would leave its MCP servers
// running, and one could finish a call that the next toolbus takes over and runs again. So the
// toolbus starts each server through this guard: the server gets its own process group (so what
// it spawned, e.g. npx -> node, goes with it), its stdin is relayed through the guard, and its
// stdout and stderr are the toolbus's pipes. The moment the guard is orphaned (its parent pid
// changes) the whole group is SIGKILLed. A clean close (the toolbus ends stdin) ends the server's
// stdin, then SIGTERM, then SIGKILL, inside the MCP SDK's own close sequence.
//
// Usage: node mcp-stdio-guard.mjs [--pid-file <path>] -- <command> [args...]
// With --pid-file, "<pid> <start time>" of the server is appended, so the next toolbus can kill a
// server whose guard was killed with it (see mcp-orphans.ts in the toolbus).
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const flags = argv.slice(0, split);
const [command, ...args] = argv.slice(split + 1);
const pidFile = flags[0] === '--pid-file' ? flags[1] : undefined;
const parent = process.ppid;

const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'], detached: true });
const group = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
};

child.on('error', (err) => {
  process.stderr.write(`mcp-stdio-guard: could not start ${command}: ${err.message}\n`);
  process.exit(127);
});
child.on('spawn', () => {
  // Read by the toolbus (its status reports the server's own pid); not part of the server's stderr.
  process.stderr.write(`mcp-stdio-guard: server pid ${child.pid}\n`);
  if (pidFile) appendFileSync(pidFile, `${child.pid} ${startTimeOf(child.pid)}\n`);
});
child.on('exit', (code, signal) => {
  // Whatever the server left in its group goes with it.
  group('SIGKILL');
  process.exit(code ?? (signal ? 128 : 1));
});
child.stdin.on('error', () => undefined); // the server exited; its exit ends the guard

process.stdin.pipe(child.stdin);
process.stdin.on('error', () => undefined);

let closing = false;
const close = () => {
  if (closing) return;
  closing = true;
  child.stdin.end();
  setTimeout(() => group('SIGTERM'), 1500).unref();
  setTimeout(() => group('SIGKILL'), 3000).unref();
};
process.stdin.on('end', close);
process.on('SIGTERM', () => {
  group('SIGTERM');
  setTimeout(() => group('SIGKILL'), 1500).unref();
});

// Orphaned: the toolbus died (its end of stdin closes too, but that also happens on a clean close).
setInterval(() => {
  if (process.ppid !== parent) group('SIGKILL');
}, 50);

function startTimeOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '0';
  } catch {
    return '0';
  }
}
