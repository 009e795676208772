import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer, type Liveness } from '@hermes/telemetry';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function get(port: number, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.json() };
}

describe('startHealthServer', () => {
  it('answers /healthz 200 while running, and /readyz 503 until ready() says otherwise', async () => {
    let ready = false;
    server = await startHealthServer({ port: 0, host: '127.0.0.1', ready: () => ready });

    expect(server.port).toBeGreaterThan(0);
    expect(await get(server.port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get(server.port, '/readyz')).toEqual({ status: 503, body: { status: 'not_ready' } });
    ready = true;
    expect(await get(server.port, '/readyz?verbose=1')).toEqual({ status: 200, body: { status: 'ready' } });
    ready = false;
    expect((await get(server.port, '/readyz')).status).toBe(503);
  });

  it('answers /healthz 503 with the reason while live() says the process makes no progress, and 200 once it does', async () => {
    let live: Liveness = { live: false, detail: { reason: 'consumer_stalled', consumers: [{ consumer: 'runtime-jobs' }] } };
    server = await startHealthServer({ port: 0, host: '127.0.0.1', ready: () => true, live: () => live });

    expect(await get(server.port, '/healthz')).toEqual({
      status: 503,
      body: { status: 'not_live', reason: 'consumer_stalled', consumers: [{ consumer: 'runtime-jobs' }] },
    });
    expect((await get(server.port, '/readyz')).status).toBe(200);
    live = { live: true };
    expect(await get(server.port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('answers other paths 404 with a structured error', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1', ready: () => true });

    const res = await get(server.port, '/metrics');

    expect(res).toEqual({ status: 404, body: { error: { code: 'not_found', message: expect.any(String) } } });
  });

  it('fails to start on a port already taken', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1', ready: () => true });

    await expect(startHealthServer({ port: server.port, host: '127.0.0.1', ready: () => true })).rejects.toThrow(/EADDRINUSE/);
  });

  it('stops answering once closed', async () => {
    const closing = await startHealthServer({ port: 0, host: '127.0.0.1', ready: () => true });
    await closing.close();

    await expect(fetch(`http://127.0.0.1:${closing.port}/healthz`)).rejects.toThrow();
  });
});
