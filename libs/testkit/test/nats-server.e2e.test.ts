import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessStartError, cleanupAll, freePort, startNatsServer } from '../src/index.js';
import { isRunning } from './process-state.js';

afterEach(async () => {
  await cleanupAll();
});

describe('startNatsServer', () => {
  it('JetStream data survives kill() and restart() on the same port', async () => {
    const nats = await startNatsServer();
    expect(nats.url).toBe(`nats://127.0.0.1:${nats.port}`);

    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
    const ack = await jetstream(nc).publish('orders.placed', 'order-1');
    expect(ack.seq).toBe(1);
    await nc.close();

    const firstPid = nats.pid;
    await nats.kill();
    expect(isRunning(firstPid)).toBe(false);
    await expect(connect({ servers: nats.url, reconnect: false, timeout: 500 })).rejects.toThrow();

    await nats.restart();
    expect(nats.pid).not.toBe(firstPid);
    const nc2 = await connect({ servers: nats.url });
    try {
      const jsm2 = await jetstreamManager(nc2);
      const info = await jsm2.streams.info('ORDERS');
      expect(info.state.messages).toBe(1);
      const stored = await jsm2.streams.getMessage('ORDERS', { seq: 1 });
      expect(stored?.subject).toBe('orders.placed');
      expect(stored?.string()).toBe('order-1');
    } finally {
      await nc2.close();
    }
  });

  it('stop() ends the process and removes its temp dir', async () => {
    const nats = await startNatsServer();
    expect(existsSync(`${nats.dir}/js`)).toBe(true);
    const pid = nats.pid;
    await nats.stop();
    expect(isRunning(pid)).toBe(false);
    expect(existsSync(nats.dir)).toBe(false);
  });

  it('keepDir leaves the store behind after stop()', async () => {
    const nats = await startNatsServer({ keepDir: true });
    await nats.stop();
    expect(existsSync(`${nats.dir}/js`)).toBe(true);
    const { rm } = await import('node:fs/promises');
    await rm(nats.dir, { recursive: true, force: true });
  });

  it('without JetStream the server answers core NATS but refuses JetStream', async () => {
    const nats = await startNatsServer({ jetstream: false });
    const nc = await connect({ servers: nats.url });
    try {
      const sub = nc.subscribe('ping', { max: 1 });
      nc.publish('ping', 'pong');
      for await (const msg of sub) expect(msg.string()).toBe('pong');
      await expect(jetstreamManager(nc, { timeout: 1_000 })).rejects.toThrow();
    } finally {
      await nc.close();
    }
  });

  it('configText applies per-test authorization', async () => {
    const nats = await startNatsServer({ configText: 'authorization { user: "svc", password: "s3cret" }' });
    await expect(connect({ servers: nats.url, reconnect: false })).rejects.toThrow(/authorization/i);
    const nc = await connect({ servers: nats.url, user: 'svc', pass: 's3cret' });
    const jsm = await jetstreamManager(nc);
    expect((await jsm.getAccountInfo()).streams).toBe(0);
    await nc.close();
  });

  it('a config the server rejects fails with the server log in the error', async () => {
    const error: unknown = await startNatsServer({ configText: 'this is { not valid nats config' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProcessStartError);
    expect((error as ProcessStartError).code).toBe('TESTKIT_START_FAILED');
    expect((error as Error).message).toMatch(/nats-server failed to start: process exited before it was ready/);
    expect((error as Error).message).toMatch(/last \d+ log lines/);
  });

  it('an explicit port that is taken fails with the bind error from the log', async () => {
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      await expect(startNatsServer({ port })).rejects.toThrow(/address already in use/);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('pause() freezes a server (clients time out) and resume() lets it answer again', async () => {
    const nats = await startNatsServer();
    const nc = await connect({ servers: nats.url });
    try {
      await nats.pause();
      expect(isRunning(nats.pid)).toBe(true);
      const frozen = await Promise.race([nc.flush().then(() => 'answered'), new Promise((r) => setTimeout(() => r('silent'), 500))]);
      expect(frozen).toBe('silent');
      nats.resume();
      await nc.flush();
    } finally {
      nats.resume();
      await nc.close();
    }
  });
});
