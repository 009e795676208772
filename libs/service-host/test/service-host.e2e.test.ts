import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus } from '@hermes/bus';
import { request } from '@hermes/bus';
import { contracts } from '@hermes/contracts';
import { cleanupAll, freePort, startChildService, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { connectBus, eventually, fixture, runtimeJob, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

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
    const consumer = await natsHandles(bus).jsm.consumers.info(bus.subjects.streams.runtimeJobs, bus.subjects.consumers.runtimeJobs);
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

describe('an OTLP protocol Hermes does not export in', () => {
  it('OTEL_EXPORTER_OTLP_PROTOCOL=http/thrift exits 78 naming the setting, before the service connects', async () => {
    const env = {
      ...process.env,
      NATS_URL: nats.url,
      HEALTH_PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/thrift',
    };

    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [fixture('hosted-service.mjs')], { env, timeout: 10_000 }, (_err, _stdout, stderr) =>
        resolve({ code: child.exitCode, stderr }),
      );
    });

    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(
      /invalid configuration for toolbus:\n {2}- OTEL_EXPORTER_OTLP_PROTOCOL: OTEL_EXPORTER_OTLP_PROTOCOL=http\/thrift is not an OTLP protocol/,
    );
  });
});

async function probeHealth(port: number): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

describe('liveness', () => {
  it('a handler stuck on a job turns /healthz 503 naming its consumer, and 200 again once it finishes; metrics show the age and the dead letters', async () => {
    const prefix = uniquePrefix('stall');
    const [healthPort, metricsPort] = [await freePort(), await freePort()];
    const ackWaitMs = 1_000;
    const service = await startChildService({
      name: 'stalling-service',
      entry: fixture('stalling-service.mjs'),
      env: {
        NATS_URL: nats.url,
        HERMES_SUBJECT_PREFIX: prefix,
        HEALTH_PORT: String(healthPort),
        METRICS_PORT: String(metricsPort),
        ACK_WAIT_MS: String(ackWaitMs),
        HERMES_LIVENESS_ACK_WAITS: '2',
        LOG_LEVEL: 'warn',
      },
      healthPort,
    });
    const bus = await connectBus(nats.url, { prefix });
    buses.push(bus);

    // Healthy while idle and while it finishes what it takes.
    await bus.publish(contracts.runtimeJobs, runtimeJob('quick', 'quick'));
    await service.waitForLog(/^done quick$/);
    expect((await probeHealth(healthPort))?.status).toBe(200);

    await bus.publish(contracts.runtimeJobs, runtimeJob('stuck', 'hang'));
    await service.waitForLog(/^took stuck$/);
    // Stalled after 2 x 1 s ack wait of holding it; the deadline leaves room for a slow machine.
    const stalled = await eventually(
      async () => {
        const r = await probeHealth(healthPort);
        return r?.status === 503 ? r.body : undefined;
      },
      20_000,
      '/healthz 503',
    );
    expect(stalled).toMatchObject({
      status: 'not_live',
      reason: 'consumer_stalled',
      consumers: [{ stream: bus.subjects.streams.runtimeJobs, consumer: bus.subjects.consumers.runtimeJobs, in_flight: 1, stall_after_ms: 2 * ackWaitMs }],
    });
    const age = await eventually(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        const line = text.split('\n').find((l) => l.startsWith('hermes_bus_consumer_oldest_unacked_age') && l.includes(bus.subjects.consumers.runtimeJobs));
        return line ? Number(line.split(' ').at(-1)) : undefined;
      },
      10_000,
      'the oldest-unacked gauge',
    );
    expect(age).toBeGreaterThanOrEqual(2);

    natsHandles(bus).nc.publish(`${prefix}.test.release`);
    await service.waitForLog(/^done stuck$/);
    await eventually(async () => ((await probeHealth(healthPort))?.status === 200 ? true : undefined), 10_000, '/healthz 200 again');

    // A poisoned job is dead-lettered at once and counted.
    await bus.publish(contracts.runtimeJobs, runtimeJob('poisoned', 'poison'));
    const counted = await eventually(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return text.split('\n').find((l) => l.startsWith('hermes_bus_dead_letters_total'));
      },
      10_000,
      'the dead-letter counter',
    );
    expect(counted).toContain(`messaging_consumer_group_name="${bus.subjects.consumers.runtimeJobs}"`);
    expect(counted).toContain('error_type="internal"');
    expect(counted!.split(' ').at(-1)).toBe('1');
    expect((await probeHealth(healthPort))?.status).toBe(200);
    expect(await service.stop(5_000)).toEqual({ code: 0, signal: null });
  });
});
