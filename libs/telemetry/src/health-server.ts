import { createServer, type Server, type ServerResponse } from 'node:http';

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/** What the liveness check found: live, or not and why (merged into the 503 body). */
export type Liveness = { live: true } | { live: false; detail: Record<string, unknown> };

export interface HealthServerOptions {
  port: number;
  host?: string;
  /** Whether the service can do its work (bus connected, streams and consumers declared). */
  ready: () => boolean;
  /**
   * Whether the process still gets anywhere (e.g. its consumers make progress); without it,
   * alive means running. Kubernetes restarts a process that stays not-live.
   */
  live?: () => Liveness;
}

/**
 * Serves the Kubernetes probes: `/healthz` answers 200 while the process runs and `live()` (when
 * given) says it is making progress, else 503 saying why; `/readyz` 200 only while `ready()`.
 * Listens on `host`, loopback by default (a container passes 0.0.0.0 for its probes).
 */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      const liveness = opts.live?.() ?? { live: true };
      return liveness.live ? reply(res, 200, { status: 'ok' }) : reply(res, 503, { ...liveness.detail, status: 'not_live' });
    }
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
