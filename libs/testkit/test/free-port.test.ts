import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../src/index.js';

describe('freePort', () => {
  it('returns a port that can be bound on 127.0.0.1 right away', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(1023);
    expect(port).toBeLessThan(65536);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host: '127.0.0.1', exclusive: true }, resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('hands out different ports to concurrent callers', async () => {
    const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
    expect(new Set(ports).size).toBeGreaterThan(1);
  });
});
