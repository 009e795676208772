import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupAll, redisCommand, startRedisServer } from '../src/index.js';

afterEach(async () => {
  await cleanupAll();
});

describe('startRedisServer', () => {
  it('answers PING, and after kill() restart() serves the same port again', async () => {
    const redis = await startRedisServer();
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(await redisCommand(redis.port, 'PING')).toBe('+PONG\r\n');
    expect(await redisCommand(redis.port, 'SET', 'greeting', 'hello')).toBe('+OK\r\n');
    expect(await redisCommand(redis.port, 'GET', 'greeting')).toBe('$5\r\nhello\r\n');

    const firstPid = redis.pid;
    await redis.kill();
    await expect(redisCommand(redis.port, 'PING')).rejects.toThrow(/ECONNREFUSED/);

    await redis.restart();
    expect(redis.pid).not.toBe(firstPid);
    expect(await redisCommand(redis.port, 'PING')).toBe('+PONG\r\n');
    // No persistence is configured, so a restarted server starts empty.
    expect(await redisCommand(redis.port, 'EXISTS', 'greeting')).toBe(':0\r\n');
  });

  it('runs without RDB snapshots or an append-only file, in its own dir', async () => {
    const redis = await startRedisServer();
    expect(await redisCommand(redis.port, 'CONFIG', 'GET', 'save')).toContain('$4\r\nsave\r\n$0\r\n\r\n');
    expect(await redisCommand(redis.port, 'CONFIG', 'GET', 'appendonly')).toContain('$10\r\nappendonly\r\n$2\r\nno\r\n');
    expect(await redisCommand(redis.port, 'CONFIG', 'GET', 'dir')).toContain(redis.dir);
  });

  it('stop() ends the process and removes its dir', async () => {
    const redis = await startRedisServer();
    await redis.stop();
    await expect(redisCommand(redis.port, 'PING')).rejects.toThrow(/ECONNREFUSED/);
    expect(existsSync(redis.dir)).toBe(false);
  });
});
