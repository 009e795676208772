import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus} from '@hermes/bus';
import { request } from '@hermes/bus';
import { contracts } from '@hermes/contracts';
import { cleanupAll, freePort, startChildService, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { connectBus, eventually, fixture, uniquePrefix } from './support.js';

let nats: NatsServerHandle;
const buses: Bus[] = [];

async function probe(port: number, path: string): Promise<number | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

function hosted(env: Record<string, string>, healthPort?: number) {
  return startChildService({
    name: 'hosted-service',
    entry: fixture('hosted-service.mjs'),
    env: { LOG_LEVEL: 'info', OTEL_SDK_DISABLED: 'true', ...env },
    ...(healthPort !== undefined ? { healthPort } : {}),
  });
}

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await cleanupAll();
});

describe('hostService', () => {
  it('is ready once streams, consumers and handlers are up, and exits 0 on SIGTERM', async () => {
    const prefix = uniquePrefix('host');
    const healthPort = await freePort();
    const service = await hosted({ NATS_URL: nats.url, HEALTH_PORT: String(healthPort), HERMES_SUBJECT_PREFIX: prefix }, healthPort);

    expect(await probe(healthPort, '/healthz')).toBe(200);
    const bus = await connectBus(nats.url, { prefix });
    buses.push(bus);
    const consumer = await bus.jsm.consumers.info(bus.subjects.streams.runtimeJobs, bus.subjects.consumers.runtimeJobs);
    expect(consumer.config.ack_wait).toBe(5_000 * 1_000_000);
    await expect(request(bus, contracts.toolsList, {})).resolves.toEqual({ tools: [] });

    const stoppedAt = Date.now();
    const status = await service.stop(5_000);

    expect(status).toEqual({ code: 0, signal: null });
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    expect(service.logs.some((l) => l.includes('stopping handlers'))).toBe(true);
    expect(service.logs.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });

  it('answers /readyz 503 while NATS is unreachable and 200 once it is up', async () => {
    const natsPort = await freePort();
    const healthPort = await freePort();
    const service = await hosted({ NATS_URL: `nats://127.0.0.1:${natsPort}`, HEALTH_PORT: String(healthPort), HERMES_SUBJECT_PREFIX: uniquePrefix('late') });

    await eventually(async () => ((await probe(healthPort, '/healthz')) === 200 ? true : undefined), 10_000, '/healthz');
    expect(await probe(healthPort, '/readyz')).toBe(503);
    await sleep(300);
    expect(await probe(healthPort, '/readyz')).toBe(503);

    const late = await startNatsServer({ port: natsPort });
    await eventually(async () => ((await probe(healthPort, '/readyz')) === 200 ? true : undefined), 10_000, '/readyz 200');

    expect(await service.stop(5_000)).toEqual({ code: 0, signal: null });
    await late.stop();
  });

  it('a shutdown that overruns SHUTDOWN_TIMEOUT_MS exits 1 at the bound instead of hanging', async () => {
    const healthPort = await freePort();
    const service = await hosted(
      { NATS_URL: nats.url, HEALTH_PORT: String(healthPort), HERMES_SUBJECT_PREFIX: uniquePrefix('slow'), SHUTDOWN_TIMEOUT_MS: '500', STOP_DELAY_MS: '10000' },
      healthPort,
    );

    const stoppedAt = Date.now();
    const status = await service.stop(5_000);

    expect(status).toEqual({ code: 1, signal: null });
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(450);
    expect(Date.now() - stoppedAt).toBeLessThan(2_500);
    expect(service.logs.some((l) => l.includes('graceful shutdown timed out'))).toBe(true);
  });

  it('a bad setting exits 78 with a message on stderr naming each bad setting', async () => {
    const env = { ...process.env, NATS_URL: nats.url, HEALTH_PORT: 'abc', SHUTDOWN_TIMEOUT_MS: '5', STOP_DELAY_MS: '-1' };

    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [fixture('hosted-service.mjs')], { env, timeout: 10_000 }, (_err, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });

    expect(result.code).toBe(78);
    expect(result.stderr).toContain('invalid configuration for toolbus');
    expect(result.stderr).toMatch(/HEALTH_PORT: must be integer/);
    expect(result.stderr).toMatch(/SHUTDOWN_TIMEOUT_MS: must be >= 100/);
    expect(result.stderr).toMatch(/STOP_DELAY_MS: must be >= 0/);
    expect(result.stdout).toBe('');
  });

  it('a setting that start refuses exits 78 with its message on stderr, as one loadConfig refuses does', async () => {
    const env = { ...process.env, NATS_URL: nats.url, HEALTH_PORT: '0', HERMES_SUBJECT_PREFIX: uniquePrefix('refused'), START_CONFIG_ERROR: 'true' };

    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [fixture('hosted-service.mjs')], { env, timeout: 10_000 }, (_err, _stdout, stderr) =>
        resolve({ code: child.exitCode, stderr }),
      );
    });

    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/invalid configuration for toolbus:\n {2}- START_CONFIG_ERROR: refused by start/);
  });
});
