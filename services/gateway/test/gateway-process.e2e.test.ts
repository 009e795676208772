import { fileURLToPath } from 'node:url';
import { cleanupAll, freePort, startChildService, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Runs the built service (npm test builds first), as a Deployment would.
const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const KEY = 'process-test-key-0123456789';

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await cleanupAll();
});

describe('gateway process', () => {
  it('exits 78 with a config error naming HERMES_API_KEYS when no keys are configured', async () => {
    const env = { NATS_URL: nats.url, HERMES_API_KEYS: '', HERMES_API_KEYS_FILE: '', HEALTH_PORT: '0' };
    const child = await startChildService({ name: 'gateway-nokeys', entry, env });
    expect((await child.exited).code).toBe(78);
    expect(child.logs.join('\n')).toMatch(/invalid configuration for gateway[\s\S]*HERMES_API_KEYS/);
  });

  it('logs the port it listens on, serves the API and stops cleanly on SIGTERM', async () => {
    const env = {
      NATS_URL: nats.url,
      HERMES_API_KEYS: JSON.stringify([{ key: KEY, user_id: 'alice', roles: [] }]),
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      HEALTH_PORT: String(await freePort()),
    };
    const child = await startChildService({ name: 'gateway', entry, env, healthPort: Number(env.HEALTH_PORT) });
    const line = await child.waitForLog(/gateway listening/);
    const { port } = JSON.parse(line.slice(line.indexOf('{'))) as { port: number };
    expect(port).toBeGreaterThan(0);

    const res = await fetch(`http://127.0.0.1:${port}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ goal: 'hello' }),
    });
    expect(res.status).toBe(202);
    expect((await child.stop()).code).toBe(0);
  });
});
