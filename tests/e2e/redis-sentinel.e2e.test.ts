import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { redisCommand, startRedisSentinelGroup, type RedisSentinelGroupHandle } from '@hermes/testkit';
import { ModelScript } from './model-script.js';
import { replicasOf, startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

/**
 * The memory service finds Redis through Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME): a master,
 * a replica and a Sentinel from the test kit, all real redis-server processes. REDIS_URL points at
 * a port nobody listens on, so every session the stack keeps went through the master Sentinel named.
 */
describe('memory through Redis Sentinel', () => {
  let group: RedisSentinelGroupHandle;
  let stack: Stack;
  let script: ModelScript;
  beforeAll(async () => {
    group = await startRedisSentinelGroup({ masterName: 'hermes-sessions' });
    stack = await startStack({
      redisUrl: 'redis://127.0.0.1:1',
      serviceEnv: { memory: { REDIS_SENTINELS: group.sentinels, REDIS_SENTINEL_NAME: group.masterName } },
    });
    script = new ModelScript(stack.llm);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await group?.stop();
  });

  const turns = async (session_id: string) => (await request(stack.bus, contracts.sessionRead, { user_id: 'alice', session_id })).messages.map((m) => m.content);

  it('keeps sessions in the master Sentinel names, and after that master is killed goes on with the promoted replica: the session keeps its turns and takes new ones', async () => {
    const [master, replica] = group.nodes;
    const session_id = 'through-sentinel';
    script.on('first turn through sentinel', [{ content: 'first answer' }]);
    script.on('second turn after the failover', [{ content: 'second answer' }]);

    const first = await submit(stack.bus, { user_id: 'alice', session_id, goal: 'first turn through sentinel' });
    expect(outcomeOf(await watchTask(stack.bus, first).done)).toMatchObject({ kind: 'completed', output: 'first answer' });
    expect(await turns(session_id)).toEqual(['first turn through sentinel', 'first answer']);
    // The session is in the master's keyspace, not anywhere REDIS_URL names.
    expect(Number(/^:(\d+)/.exec(await redisCommand(master!.port, 'DBSIZE'))?.[1])).toBeGreaterThan(0);
    await group.waitForReplicas();

    await master!.kill();
    // Submitted while the master is gone and not yet replaced: the job's memory requests fail
    // retryably (unavailable) and wait out the outage until the replica is promoted.
    const second = await submit(stack.bus, { user_id: 'alice', session_id, goal: 'second turn after the failover' });
    // Sentinel holds the master down after 1 s and promotes the replica: seconds, more on a loaded machine.
    expect(await group.waitForFailover(master!.port, 60_000)).toBe(replica!.port);
    expect(outcomeOf(await watchTask(stack.bus, second, 90_000).done)).toMatchObject({ kind: 'completed', output: 'second answer' });
    expect(await turns(session_id)).toEqual(['first turn through sentinel', 'first answer', 'second turn after the failover', 'second answer']);
    const [memory] = await replicasOf(stack, 'memory');
    await expect(memory!.waitForLog(/Redis connection restored/, 5000)).resolves.toBeDefined();
  }, 180_000);
});
