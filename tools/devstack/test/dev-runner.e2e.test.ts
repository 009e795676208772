import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupAll, eventually, freePort, startChildService, type ChildService } from '@hermes/testkit';

// The dev runner as `npm run up` starts it (built: `npm run build` first), on ports of its own.
const runnerEntry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const API_KEY = 'dev-runner-test-key-0001';
// Generous bounds, not expectations: on a machine shared with other test runs, starting nats-server,
// redis-server and five Node services can take tens of seconds, and the graceful stop is bounded
// by the runner itself at 20 s.
const START_TIMEOUT_MS = 180_000;
const GONE_TIMEOUT_MS = 60_000;

const dataDirs: string[] = [];
const everyPid = new Set<number>();

interface RunningStack {
  runner: ChildService;
  gatewayPort: number;
  /** The runner's children: nats-server, redis-server, the five services and the orphan guard. */
  children: number[];
}

async function startRunner(): Promise<RunningStack> {
  const gatewayPort = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'hermes-dev-runner-'));
  dataDirs.push(dataDir);
  const runner = await startChildService({
    name: 'dev-runner',
    entry: runnerEntry,
    // Empty is unset for the runner: it starts its own servers and the scripted model.
    env: {
      GATEWAY_PORT: String(gatewayPort),
      MEMORY_DATA_DIR: dataDir,
      HERMES_DEV_API_KEY: API_KEY,
      NATS_URL: '',
      REDIS_URL: '',
      OPENAI_BASE_URL: '',
      OPENAI_API_KEY: '',
    },
  });
  everyPid.add(runner.pid);
  await runner.waitForLog(/Hermes is running/, START_TIMEOUT_MS);
  await eventually(async () => (await apiStatus(gatewayPort)) === 200, 30_000, 'the HTTP API to answer');
  const children = childrenOf(runner.pid);
  children.forEach((pid) => everyPid.add(pid));
  return { runner, gatewayPort, children };
}

async function apiStatus(port: number): Promise<number | undefined> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/v1/tasks`, { headers: { authorization: `Bearer ${API_KEY}` } })).status;
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map(Number);
}

/** Alive and not a zombie (an orphan's zombie waits for whatever reaps at pid 1, and serves nothing). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(1)?.startsWith('Z') !== true;
  } catch {
    return true; // no /proc (macOS): kill(0) is all there is
  }
}

/** Whether something accepts connections on host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Local addresses of the listening TCP sockets of these pids, from `ss` (Linux). */
function listeningAddresses(pids: readonly number[]): string[] {
  const lines = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' }).split('\n');
  return lines.filter((line) => pids.some((pid) => line.includes(`pid=${pid},`))).map((line) => line.trim().split(/\s+/)[3]!);
}

const hasCommand = (cmd: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  // Whatever a failed test left running.
  for (const pid of everyPid) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  await cleanupAll();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('the dev runner (npm run up)', () => {
  describe('one stack, stopped with SIGTERM to the runner alone', () => {
    let stack: RunningStack;

    it(
      'starts nats-server, redis-server, five services and its orphan guard as its children',
      async () => {
        stack = await startRunner();
        expect(stack.children.length).toBeGreaterThanOrEqual(8);
      },
      START_TIMEOUT_MS + 60_000,
    );

    it('prints the console URL in its banner, and the console answers there', async () => {
      // The banner line as `npm run up` prints it (tools/devstack/src/main.ts).
      const line = await stack.runner.waitForLog(/^\s*console\s+http:\/\//, 5000);
      const url = /console\s+(http:\/\/\S+)/.exec(line)?.[1];
      expect(url).toBe(`http://127.0.0.1:${stack.gatewayPort}/console/`);
      const page = await fetch(url!);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('<title>');
    });

    it.skipIf(!hasCommand('ss'))('listens on 127.0.0.1 only: the gateway, every health port, NATS, Redis and the scripted model', () => {
      const addresses = listeningAddresses([stack.runner.pid, ...stack.children]);

      expect(addresses).toContain(`127.0.0.1:${stack.gatewayPort}`);
      // gateway + 5 health servers + nats-server + redis-server + the scripted model in the runner
      expect(addresses.length).toBeGreaterThanOrEqual(9);
      expect(addresses.filter((a) => !a.startsWith('127.0.0.1:'))).toEqual([]);
    });

    it("does not answer on the machine's other addresses", async () => {
      const external = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && a.family === 'IPv4' && !a.internal)
        .map((a) => a!.address);
      for (const address of external) expect(await accepts(address, stack.gatewayPort), address).toBe(false);
      expect(await accepts('127.0.0.1', stack.gatewayPort)).toBe(true);
    });

    it(
      'SIGTERM to the runner pid alone stops every child, frees the port, and the runner exits 0',
      async () => {
        process.kill(stack.runner.pid, 'SIGTERM');

        expect(await stack.runner.exited).toEqual({ code: 0, signal: null });
        await eventually(() => stack.children.every((pid) => !isRunning(pid)), GONE_TIMEOUT_MS, 'every child to exit');
        expect(await accepts('127.0.0.1', stack.gatewayPort)).toBe(false);
        expect(stack.runner.logs).toContain('stopped.');
      },
      GONE_TIMEOUT_MS + 30_000,
    );
  });

  it(
    'a runner killed with SIGKILL leaves nothing running: its orphan guard stops the children',
    async () => {
      const stack = await startRunner();

      process.kill(stack.runner.pid, 'SIGKILL');

      await eventually(() => stack.children.every((pid) => !isRunning(pid)), GONE_TIMEOUT_MS, 'every orphaned child to exit');
      expect(await accepts('127.0.0.1', stack.gatewayPort)).toBe(false);
    },
    START_TIMEOUT_MS + GONE_TIMEOUT_MS + 30_000,
  );
});
