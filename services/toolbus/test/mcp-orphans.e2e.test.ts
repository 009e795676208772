import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { callRequest, callTool, connect, freshPrefix, natsForFile, sleep, startTestToolbus } from './helpers.js';
import { configText, serverStatus, startToolbusProcess, waitFor } from './mcp-helpers.js';

const ledgerServer = fileURLToPath(new URL('./fixtures/ledger-mcp-server.mjs', import.meta.url));
const nats = natsForFile();
const cleanups = nats.cleanups;

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hermes-mcp-orphans-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The process's state letter from /proc (a killed child not yet reaped is a zombie, `Z`: dead). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !'ZX'.includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

function startTime(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** A process in a group of its own that runs until killed, as an MCP server left behind would. */
function lingering(): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
  cleanups.push(() => void (alive(child.pid!) && process.kill(child.pid!, 'SIGKILL')));
  return child.pid!;
}

describe('stdio MCP servers die with their toolbus', () => {
  it('a toolbus killed with SIGKILL mid-call takes its stdio MCP server with it, before the server finishes the call', async () => {
    const dir = scratchDir();
    const configFile = join(dir, 'mcp.json');
    const pidFile = join(dir, 'mcp.pids');
    const [ledger, started] = [join(dir, 'ledger.jsonl'), join(dir, 'started.jsonl')];
    writeFileSync(
      configFile,
      configText({ books: { transport: 'stdio', command: process.execPath, args: [ledgerServer], env: { LEDGER_FILE: ledger, STARTED_FILE: started } } }),
    );
    const prefix = freshPrefix();
    const toolbus = await startToolbusProcess({ natsUrl: nats.url, prefix, configFile, env: { MCP_PID_FILE: pidFile } });
    cleanups.push(() => toolbus.kill());
    const bus = await connect(nats.url, prefix);
    cleanups.push(() => bus.drain());
    const server = await waitFor('the MCP server ready', async () => {
      const s = await serverStatus(bus, 'books');
      return s?.state === 'ready' && s.pid !== undefined ? s : undefined;
    });
    const pid = server.pid!;
    expect(readFileSync(pidFile, 'utf8')).toBe(`${pid} ${startTime(pid)}\n`);
    const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

    void callTool(bus, callRequest({ tool: 'books_ledger_append', arguments: JSON.stringify({ entry: 'pay rent', delay_ms: 2000 }), roles: ['admin'] })).catch(
      () => undefined,
    );
    await waitFor("the call in the server's hands", async () => lines(started).length === 1);
    await toolbus.kill();
    // Generous: the guard looks for its parent every 50 ms, but a loaded 2-core machine may be slow to run it.
    await waitFor('the MCP server to be gone', async () => !alive(pid), 10_000);
    // Past the moment the call would have written its effect (2 s after it started), had the server lived on.
    await sleep(2500);
    expect(lines(ledger)).toEqual([]);
  });

  it('a toolbus starting kills the MCP servers a previous run recorded in its pid file, and only those', async () => {
    const pidFile = join(scratchDir(), 'mcp.pids');
    const orphan = lingering();
    // Its pid recorded with another start time: the pid was since given to an unrelated process.
    const unrelated = lingering();
    writeFileSync(pidFile, `${orphan} ${startTime(orphan)}\n${unrelated} ${startTime(unrelated) + 1}\n`);
    const bus = await connect(nats.url, freshPrefix());
    const toolbus = await startTestToolbus(bus, { MCP_PID_FILE: pidFile });
    cleanups.push(async () => (await toolbus.stop(2000), await bus.drain()));
    await waitFor('the orphan to be gone', async () => !alive(orphan), 10_000);
    expect(alive(unrelated)).toBe(true);
    expect(readFileSync(pidFile, 'utf8')).toBe('');
  });
});
