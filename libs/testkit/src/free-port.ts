import { createServer } from 'node:net';

/**
 * Asks the OS for a port that is free right now on 127.0.0.1.
 * Another process may still take it before the caller binds, so servers started here retry on a clash.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port the OS assigned'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
