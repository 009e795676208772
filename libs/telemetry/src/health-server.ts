import { createServer, type Server, type ServerResponse } from 'node:http';

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves the Kubernetes probes: `/healthz` answers while the process runs, `/readyz` only while
 * `ready()` says the service can do its work (bus connected, streams and consumers declared).
 * Listens on `host`, loopback by default (a container passes 0.0.0.0 for its probes).
 */
export async function startHealthServer(opts: { port: number; ready: () => boolean; host?: string }): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return reply(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      const ok = opts.ready();
      return reply(res, ok ? 200 : 503, { status: ok ? 'ready' : 'not_ready' });
    }
    reply(res, 404, { error: { code: 'not_found', message: 'only /healthz and /readyz are served here' } });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
