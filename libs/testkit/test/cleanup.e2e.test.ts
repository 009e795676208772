import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, freePort, startChildService, startNatsServer, startRedisServer, startScriptedLlm } from '../src/index.js';
import { builtFile } from './built-dist.js';
import { isRunning } from './process-state.js';

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// A parent that starts servers through the built kit and then ends in the way given by argv[2],
// never stopping its servers itself: the kit's exit hooks must.
const LEAKY_PARENT = (kitUrl: string): string => `
import { startNatsServer, startRedisServer } from ${JSON.stringify(kitUrl)};
const nats = await startNatsServer();
const redis = await startRedisServer();
console.log('servers ' + JSON.stringify({ natsPid: nats.pid, natsDir: nats.dir, redisPid: redis.pid, redisDir: redis.dir }));
if (process.argv[2] === 'exit') process.exit(0);
if (process.argv[2] === 'throw') throw new Error('parent crashed');
setInterval(() => {}, 1000);
`;

let dir: string;
let parentScript: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'testkit-cleanup-'));
  parentScript = join(dir, 'leaky-parent.mjs');
  await writeFile(parentScript, LEAKY_PARENT(pathToFileURL(builtFile('index.js')).href));
});

afterEach(async () => {
  await cleanupAll();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('process cleanup', () => {
  it('cleanupAll stops every server, child service and scripted LLM', async () => {
    const nats = await startNatsServer();
    const redis = await startRedisServer();
    const llm = await startScriptedLlm();
    const child = await startChildService({ name: 'idle', entry: parentScript, args: ['stay'] });
    const { natsPid, redisPid } = JSON.parse((await child.waitForLog(/^servers /)).slice('servers '.length)) as { natsPid: number; redisPid: number };

    await cleanupAll();

    expect(isRunning(nats.pid)).toBe(false);
    expect(isRunning(redis.pid)).toBe(false);
    expect(existsSync(nats.dir)).toBe(false);
    expect(await accepts(llm.port)).toBe(false);
    expect((await child.exited).signal).toBe('SIGTERM');
    // The child's own servers were reaped by the kit inside the child when it got SIGTERM.
    await expect.poll(() => isRunning(natsPid) || isRunning(redisPid)).toBe(false);
  });

  for (const ending of ['sigterm', 'exit', 'throw'] as const) {
    it(`servers started by a parent die with it when the parent ends by ${ending}`, async () => {
      const parent = await startChildService({ name: `parent-${ending}`, entry: parentScript, args: [ending === 'sigterm' ? 'stay' : ending] });
      const line = await parent.waitForLog(/^servers /);
      const servers = JSON.parse(line.slice('servers '.length)) as { natsPid: number; natsDir: string; redisPid: number; redisDir: string };
      // Only a parent that stays up can be caught with its servers still running.
      if (ending === 'sigterm') expect(isRunning(servers.natsPid)).toBe(true);

      const status = ending === 'sigterm' ? await parent.stop(5_000) : await parent.exited;
      if (ending === 'sigterm') expect(status).toEqual({ code: null, signal: 'SIGTERM' });
      if (ending === 'exit') expect(status).toEqual({ code: 0, signal: null });
      if (ending === 'throw') expect(status.code).toBe(1);

      await expect.poll(() => isRunning(servers.natsPid)).toBe(false);
      await expect.poll(() => isRunning(servers.redisPid)).toBe(false);
      await expect.poll(() => existsSync(servers.natsDir) || existsSync(servers.redisDir)).toBe(false);
    });
  }

  it('a port freed by a dead server can be reused', async () => {
    const port = await freePort();
    const nats = await startNatsServer({ port });
    await nats.kill();
    const again = await startNatsServer({ port });
    expect(again.port).toBe(port);
  });
});
