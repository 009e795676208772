import { afterEach, describe, expect, it } from 'vitest';
import { cleanupAll, redisCommand, startRedisSentinelGroup } from '../src/index.js';

afterEach(async () => {
  await cleanupAll();
});

describe('startRedisSentinelGroup', () => {
  it('starts a master, a replica and a Sentinel; a killed master is replaced by the promoted replica, with the data it had replicated', async () => {
    const group = await startRedisSentinelGroup({ masterName: 'kit' });
    const [master, replica] = group.nodes;
    expect(group.sentinels).toBe(`127.0.0.1:${group.sentinel.port}`);
    expect(await group.masterPort()).toBe(master!.port);
    expect(await redisCommand(replica!.port, 'ROLE')).toMatch(/^\*5\r\n\$5\r\nslave\r\n/);

    expect(await redisCommand(master!.port, 'SET', 'k', 'before the failover')).toBe('+OK\r\n');
    await group.waitForReplicas();
    await master!.kill();
    // Sentinel holds the master down after 1 s (the kit's down-after) and promotes the replica:
    // seconds on a loaded machine, so a generous wait.
    expect(await group.waitForFailover(master!.port, 60_000)).toBe(replica!.port);
    expect(await redisCommand(replica!.port, 'ROLE')).toMatch(/^\*3\r\n\$6\r\nmaster\r\n/);
    expect(await redisCommand(replica!.port, 'GET', 'k')).toBe('$19\r\nbefore the failover\r\n');
  });

  it('stop() ends every process of the group', async () => {
    const group = await startRedisSentinelGroup();
    await group.stop();
    for (const port of [group.sentinel.port, ...group.nodes.map((n) => n.port)]) {
      await expect(redisCommand(port, 'PING')).rejects.toThrow(/ECONNREFUSED/);
    }
  });
});
