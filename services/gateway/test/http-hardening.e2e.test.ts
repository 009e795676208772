import { connect, type Socket } from 'node:net';
import { Bus } from '@hermes/bus';
import { HTTP_OPERATIONS, PROBLEM_JSON, ProblemDetails, validate } from '@hermes/contracts';
import { buildOpenApi } from '@hermes/contracts/openapi';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayServer, type GatewayServer } from '../src/index.js';
import { standInDispatcher } from './support/stand-in-dispatcher.js';
import { ALICE, apiKeys, logger } from './support/test-keys.js';

const CONSOLE_ORIGIN = 'http://console.example:8443';
/** A task of alice's the stand-in dispatcher answers for. */
const TASK = 't_hardening';

let natsUrl: string;
let bus: Bus;
let gateway: GatewayServer;
let base: string;
const extra: GatewayServer[] = [];

beforeAll(async () => {
  const nats = await startNatsServer();
  natsUrl = nats.url;
  bus = await Bus.connect({ servers: nats.url, name: 'gateway-hardening-test', logger });
  await bus.ensureStreams(['taskSubmit', 'taskEvents']);
  standInDispatcher(bus).addTask(TASK, 'alice');
  gateway = createGatewayServer({ bus, apiKeys, logger, corsOrigins: [CONSOLE_ORIGIN] });
  base = `http://127.0.0.1:${(await gateway.listen({ port: 0 })).port}`;
});

afterAll(async () => {
  for (const g of extra) await g.close(1000);
  await gateway?.close();
  await bus?.drain();
  await cleanupAll();
});

async function another(opts: Partial<Parameters<typeof createGatewayServer>[0]>): Promise<{ gateway: GatewayServer; port: number }> {
  const g = createGatewayServer({ bus, apiKeys, logger, ...opts });
  extra.push(g);
  return { gateway: g, port: (await g.listen({ port: 0 })).port };
}

/** Reads an answer as problem details, failing unless it is one (media type and schema). */
async function problem(res: Response): Promise<ProblemDetails> {
  expect(res.headers.get('content-type')).toBe(`${PROBLEM_JSON}; charset=utf-8`);
  const checked = validate(ProblemDetails, await res.json());
  if (!checked.ok) throw new Error(`not problem details: ${JSON.stringify(checked.issues)}`);
  expect(checked.value.status).toBe(res.status);
  expect(checked.value.type).toBe(`urn:hermes:problem:${checked.value.code}`);
  return checked.value;
}

const auth = { authorization: `Bearer ${ALICE}` };

describe('errors are RFC 9457 problem details', () => {
  // One request per documented operation, without a key: each must refuse with a problem (and so exists).
  const samples: Record<string, string> = { id: 't_x', call_id: 'c_1', user: 'alice', memory_id: 'm_1', server: 'web' };
  const routes = HTTP_OPERATIONS.filter((op) => !('public' in op)).map(
    (op) => [op.method.toUpperCase(), op.path.replace(/\{([^}]+)\}/g, (_, name: string) => samples[name]!)] as const,
  );
  it.each(routes)('%s %s without a key answers 401 unauthorized as a problem', async (method, path) => {
    const res = await fetch(`${base}${path}`, { method });
    expect(res.status).toBe(401);
    expect(await problem(res)).toMatchObject({ code: 'unauthorized', title: 'Unauthorized', retryable: false, detail: expect.stringContaining('Bearer') });
  });

  it('an unknown path, a wrong method and a bad body are problems too, with the validation issues', async () => {
    expect(await problem(await fetch(`${base}/v2/nothing`, { headers: auth }))).toMatchObject({ status: 404, code: 'not_found' });
    const wrongMethod = await fetch(`${base}/v1/tasks`, { method: 'PUT', headers: auth });
    expect(wrongMethod.headers.get('allow')).toBe('POST, GET');
    expect(await problem(wrongMethod)).toMatchObject({ status: 405, code: 'method_not_allowed' });
    const invalid = await problem(await fetch(`${base}/v1/tasks`, { method: 'POST', headers: auth, body: '{"goal":""}' }));
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_payload', title: 'Invalid payload' });
    expect(invalid.issues?.map((i) => i.path)).toContain('/goal');
    const tooDeep = await problem(
      await fetch(`${base}/v1/tasks`, { method: 'POST', headers: auth, body: `{"goal":"g","inputs":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}` }),
    );
    expect(tooDeep).toMatchObject({ status: 400, code: 'payload_limit', details: { limit: 'maxDepth' } });
  });

  it('a bus that is down is a retryable problem with Retry-After', async () => {
    // Another subject prefix: no dispatcher listens there.
    const lonely = await Bus.connect({ servers: natsUrl, name: 'lonely', logger, prefix: 'nobody' });
    const { port } = await another({ bus: lonely });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/tasks/t_x`, { headers: auth });
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await problem(res)).toMatchObject({ status: 503, code: 'no_responders', retryable: true });
    } finally {
      await lonely.drain();
    }
  });
});

describe('GET /v1/openapi.json', () => {
  it('serves the OpenAPI document without a key, exactly as the contracts build it', async () => {
    const res = await fetch(`${base}/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(buildOpenApi());
    // Only GET is open: any other method is still refused.
    expect((await fetch(`${base}/v1/openapi.json`, { method: 'POST' })).status).toBe(405);
  });

  it('routes exactly the documented paths: an undocumented one is 404', async () => {
    expect((await fetch(`${base}/v1/tasks/t_x/secrets`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${base}/v1/openapi.yaml`, { headers: auth })).status).toBe(404);
  });
});

describe('GET /v1/me', () => {
  it('answers who the key acts for and, with no HERMES_APPROVER_ROLES, that it decides only its own approvals', async () => {
    const res = await fetch(`${base}/v1/me`, { headers: auth });
    expect(await res.json()).toEqual({ user_id: 'alice', team: 'default', roles: ['user'], is_admin: false, approves: true, approves_team: false });
  });
});

describe('the console at /console', () => {
  it('serves its page and scripts without a key, from the gateway only (CSP), and its config with the trace URL template', async () => {
    const { port } = await another({ traceUrlTemplate: 'http://jaeger.example/trace/{trace_id}' });
    const at = `http://127.0.0.1:${port}`;
    const bare = await fetch(`${at}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/console/');
    const page = await fetch(`${at}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/console/main.js">');
    // Built by `npm run build` (tsc of services/gateway/console).
    const script = await fetch(`${at}/console/main.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await (await fetch(`${at}/console/config.json`)).json()).toEqual({ traceUrlTemplate: 'http://jaeger.example/trace/{trace_id}' });
  });

  it('answers 404 problems for anything that is not one of its files, however the name is spelled', async () => {
    for (const name of ['..%2Fpackage.json', '../package.json', '%2e%2e/src/gateway.ts', 'main.ts', 'api-keys.js.map', 'nothing.js', '.tsbuildinfo']) {
      const res = await fetch(`${base}/console/${name}`);
      expect(res.status, name).not.toBe(200);
    }
    expect(await problem(await fetch(`${base}/console/nothing.js`))).toMatchObject({ status: 404, code: 'not_found' });
    // /console/ is a documented path (GET only): another method is 405 with the methods it has.
    const posted = await fetch(`${base}/console/`, { method: 'POST' });
    expect(posted.headers.get('allow')).toBe('GET');
    expect(await problem(posted)).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });
});

describe('CORS', () => {
  const preflight = (origin: string, at = base) =>
    fetch(`${at}/v1/tasks`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('answers a preflight from a configured origin with the methods and headers it may use, before authentication', async () => {
    const res = await preflight(CONSOLE_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, GET');
    expect(res.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('lets a page of the configured origin read answers, errors included', async () => {
    const ok = await fetch(`${base}/v1/tasks/${TASK}`, { headers: { ...auth, origin: CONSOLE_ORIGIN } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
    const refused = await fetch(`${base}/v1/tasks`, { headers: { origin: CONSOLE_ORIGIN } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
    expect(refused.headers.get('access-control-expose-headers')).toContain('www-authenticate');
  });

  it('refuses a preflight from any other origin and sends no CORS headers to it', async () => {
    for (const origin of ['http://evil.example', 'http://console.example', `${CONSOLE_ORIGIN}.evil.example`, 'null']) {
      const res = await preflight(origin);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(await problem(res)).toMatchObject({ status: 403, code: 'origin_not_allowed' });
      const read = await fetch(`${base}/v1/tasks`, { headers: { ...auth, origin } });
      expect(read.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('is off by default: no origin passes a preflight', async () => {
    const { port } = await another({});
    const res = await preflight(CONSOLE_ORIGIN, `http://127.0.0.1:${port}`);
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

/** Opens a raw TCP connection and collects what the server sends until it closes it. */
function rawConnection(port: number): Promise<{ socket: Socket; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.once('error', () => undefined);
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

describe('slow clients and connection cap', () => {
  // The bounds are small so the tests are quick; the waits are generous (the machine may be busy).
  it('answers 408 and closes a connection that does not finish its headers in time', async () => {
    const { port } = await another({ headersTimeoutMs: 300, requestTimeoutMs: 600, timeoutCheckIntervalMs: 100 });
    const { socket, closed } = await rawConnection(port);
    socket.write('GET /v1/tasks HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ');
    expect(await closed).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it('closes a connection whose body does not arrive in time, and the gateway keeps serving', async () => {
    const { port } = await another({ headersTimeoutMs: 300, requestTimeoutMs: 600, timeoutCheckIntervalMs: 100 });
    const { socket, closed } = await rawConnection(port);
    socket.write(`POST /v1/tasks HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${ALICE}\r\nContent-Length: 100\r\n\r\n{"goal":`);
    expect(await closed).not.toMatch(/^HTTP\/1\.1 2/);
    expect((await fetch(`http://127.0.0.1:${port}/v1/tasks/${TASK}`, { headers: auth })).status).toBe(200);
  }, 20_000);

  it('closes a connection beyond GATEWAY_MAX_CONNECTIONS at once and serves again when one is free', async () => {
    const { gateway: capped, port } = await another({ maxConnections: 2 });
    const held = [await rawConnection(port), await rawConnection(port)];
    await expect.poll(() => new Promise<number>((r) => capped.server.getConnections((_, n) => r(n))), { timeout: 10_000 }).toBe(2);
    const third = await rawConnection(port);
    expect(await third.closed).toBe('');
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await expect
      .poll(async () => (await fetch(`http://127.0.0.1:${port}/v1/tasks/${TASK}`, { headers: { ...auth, connection: 'close' } })).status, { timeout: 10_000 })
      .toBe(200);
    held[1]!.socket.destroy();
  }, 20_000);
});
