import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupAll, startRedisServer } from '../src/index.js';

/** Sends one RESP command followed by QUIT and resolves with everything the server wrote before closing. */
async function redisRaw(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
    });
    socket.once('end', () => resolve(received));
    const encode = (command: string[]): string => `*${command.length}\r\n${command.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
    socket.write(encode(args) + encode(['QUIT']));
  });
}

afterEach(async () => {
  await cleanupAll();
});

describe('startRedisServer', () => {
  it('answers PING, and after kill() restart() serves the same port again', async () => {
    const redis = await startRedisServer();
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(await redisRaw(redis.port, 'PING')).toBe('+PONG\r\n+OK\r\n');
    expect(await redisRaw(redis.port, 'SET', 'greeting', 'hello')).toBe('+OK\r\n+OK\r\n');
    expect(await redisRaw(redis.port, 'GET', 'greeting')).toBe('$5\r\nhello\r\n+OK\r\n');

    const firstPid = redis.pid;
    await redis.kill();
    await expect(redisRaw(redis.port, 'PING')).rejects.toThrow(/ECONNREFUSED/);

    await redis.restart();
    expect(redis.pid).not.toBe(firstPid);
    expect(await redisRaw(redis.port, 'PING')).toBe('+PONG\r\n+OK\r\n');
    // No persistence is configured, so a restarted server starts empty.
    expect(await redisRaw(redis.port, 'EXISTS', 'greeting')).toBe(':0\r\n+OK\r\n');
  });

  it('runs without RDB snapshots or an append-only file, in its own dir', async () => {
    const redis = await startRedisServer();
    expect(await redisRaw(redis.port, 'CONFIG', 'GET', 'save')).toContain('$4\r\nsave\r\n$0\r\n\r\n');
    expect(await redisRaw(redis.port, 'CONFIG', 'GET', 'appendonly')).toContain('$10\r\nappendonly\r\n$2\r\nno\r\n');
    expect(await redisRaw(redis.port, 'CONFIG', 'GET', 'dir')).toContain(redis.dir);
  });

  it('stop() ends the process and removes its dir', async () => {
    const redis = await startRedisServer();
    await redis.stop();
    await expect(redisRaw(redis.port, 'PING')).rejects.toThrow(/ECONNREFUSED/);
    expect(existsSync(redis.dir)).toBe(false);
  });
});
