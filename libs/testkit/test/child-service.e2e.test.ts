import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProcessStartError, WaitForLogError, cleanupAll, freePort, startChildService } from '../src/index.js';
import { isRunning } from './process-state.js';

// Serves /readyz with 503 for its first READY_AFTER_MS, then 200, so the kit must really wait.
const SERVICE_SCRIPT = `
import { createServer } from 'node:http';
const startedAt = Date.now();
const readyAfterMs = Number(process.env.READY_AFTER_MS ?? 0);
const server = createServer((req, res) => {
  if (req.url === '/readyz') {
    const ready = Date.now() - startedAt >= readyAfterMs;
    res.writeHead(ready ? 200 : 503).end(ready ? 'ok' : 'starting');
    return;
  }
  res.writeHead(404).end();
});
server.listen(Number(process.env.HEALTH_PORT), '127.0.0.1', () => {
  console.log('listening on ' + process.env.HEALTH_PORT + ' args=' + process.argv.slice(2).join(','));
  console.error('greeting from stderr: ' + process.env.GREETING);
});
process.on('SIGTERM', () => {
  console.log('draining');
  server.close(() => process.exit(0));
});
`;

const CRASH_SCRIPT = `console.error('boom: missing config'); process.exit(3);`;
const STUBBORN_SCRIPT = `process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('up'); setInterval(() => {}, 1000);`;

let dir: string;
const script = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'testkit-child-'));
  await writeFile(script('service.mjs'), SERVICE_SCRIPT);
  await writeFile(script('crash.mjs'), CRASH_SCRIPT);
  await writeFile(script('stubborn.mjs'), STUBBORN_SCRIPT);
});

afterEach(async () => {
  await cleanupAll();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('startChildService', () => {
  it('waits until /readyz answers 200 and collects stdout and stderr lines', async () => {
    const healthPort = await freePort();
    const started = Date.now();
    const service = await startChildService({
      name: 'svc',
      entry: script('service.mjs'),
      env: { HEALTH_PORT: String(healthPort), READY_AFTER_MS: '400', GREETING: 'hi' },
      args: ['--one', '--two'],
      healthPort,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(service.name).toBe('svc');
    expect(isRunning(service.pid)).toBe(true);
    expect(await service.waitForLog(/greeting from stderr/)).toBe('greeting from stderr: hi');
    expect(service.logs).toContain(`listening on ${healthPort} args=--one,--two`);

    const status = await service.stop();
    expect(status).toEqual({ code: 0, signal: null });
    expect(service.logs).toContain('draining');
    expect(isRunning(service.pid)).toBe(false);
  });

  it('kill() ends the process with SIGKILL', async () => {
    const healthPort = await freePort();
    const service = await startChildService({ name: 'svc', entry: script('service.mjs'), env: { HEALTH_PORT: String(healthPort) }, healthPort });
    await service.kill();
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(service.logs).not.toContain('draining');
  });

  it('stop() escalates to SIGKILL when SIGTERM is ignored', async () => {
    const service = await startChildService({ name: 'stubborn', entry: script('stubborn.mjs') });
    await service.waitForLog(/^up$/);
    const status = await service.stop(300);
    expect(status.signal).toBe('SIGKILL');
    expect(service.logs).toContain('ignoring SIGTERM');
  });

  it('a process that exits before it is ready fails fast with its log and exit code', async () => {
    const healthPort = await freePort();
    const started = Date.now();
    const error: unknown = await startChildService({ name: 'crasher', entry: script('crash.mjs'), healthPort }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(ProcessStartError);
    expect((error as Error).message).toContain('crasher failed to start: process exited before it was ready (exit code 3)');
    expect((error as Error).message).toContain('boom: missing config');
  });

  it('a process that never gets ready times out, says it was still running, and is killed', async () => {
    const healthPort = await freePort();
    const otherPort = await freePort();
    const error: unknown = await startChildService({
      name: 'never-ready',
      entry: script('service.mjs'),
      env: { HEALTH_PORT: String(otherPort) },
      healthPort,
      readyTimeoutMs: 500,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProcessStartError);
    const message = (error as Error).message;
    expect(message).toMatch(/not ready after 500 ms \(process still running, pid (\d+)\)/);
    expect(message).toContain(`listening on ${otherPort}`);
    const pid = Number(/pid (\d+)/.exec(message)?.[1]);
    expect(isRunning(pid)).toBe(false);
  });

  it('waitForLog rejects on timeout and when the process exits first', async () => {
    const service = await startChildService({ name: 'stubborn', entry: script('stubborn.mjs') });
    await expect(service.waitForLog(/never printed/, 200)).rejects.toThrow(WaitForLogError);
    const pending = service.waitForLog(/never printed/, 10_000);
    await service.kill();
    await expect(pending).rejects.toThrow(/process exited first \(killed by SIGKILL\)/);
  });
});
