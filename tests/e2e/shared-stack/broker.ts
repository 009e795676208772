import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startScriptedLlm } from '@hermes/testkit';
import { ModelRouter } from './model-router.js';

/** How a test file reaches the shared stack's processes. */
export interface SharedStackInfo {
  natsUrl: string;
  redisUrl: string;
  gatewayUrl: string;
}

export interface StartedStack {
  info: SharedStackInfo;
  stop(): Promise<void>;
}

/**
 * The vitest main process's side of the shared stack, over HTTP on 127.0.0.1: `POST /stack`
 * starts the stack on first use (so a run without a stock e2e file starts none) and answers its
 * addresses; `PUT`/`DELETE /model?port=` hands the model's traffic to a file's scripted model;
 * every other path is the model endpoint the stack's services call (see ModelRouter).
 */
export async function startBroker(startStack: (modelBaseUrl: string) => Promise<StartedStack>): Promise<{ url: string; close(): Promise<void> }> {
  const idle = await startScriptedLlm();
  const router = new ModelRouter(idle.port);
  let url = '';
  let started: Promise<StartedStack> | undefined;
  const server = createServer((req, res) => {
    const { pathname, searchParams } = new URL(req.url ?? '/', url);
    const port = Number(searchParams.get('port'));
    if (pathname === '/stack' && req.method === 'POST') {
      started ??= startStack(`${url}/v1`);
      started.then(
        (s) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(s.info)),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`the shared stack did not start: ${String(err)}`),
      );
    } else if (pathname === '/model' && Number.isInteger(port) && port > 0 && (req.method === 'PUT' || req.method === 'DELETE')) {
      if (req.method === 'PUT') router.hold(port);
      else router.release(port);
      res.writeHead(204).end();
    } else {
      router.forward(req, res);
    }
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async close() {
      await started?.then(
        (s) => s.stop(),
        () => undefined,
      );
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await idle.close();
    },
  };
}
