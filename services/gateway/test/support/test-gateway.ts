import type { Bus } from '@hermes/bus';
import { cleanupAll } from '@hermes/testkit';
import { createGatewayServer, type GatewayServerOptions } from '../../src/index.js';

/** A gateway on a free port of 127.0.0.1, and how to stop it with its bus and the test kit's servers. */
export async function startTestGateway(opts: GatewayServerOptions & { bus: Bus }): Promise<{ base: string; stop(): Promise<void> }> {
  const gateway = createGatewayServer(opts);
  const { port } = await gateway.listen({ port: 0, host: '127.0.0.1' });
  return {
    base: `http://127.0.0.1:${port}`,
    async stop() {
      await gateway.close();
      await opts.bus.drain();
      await cleanupAll();
    },
  };
}
