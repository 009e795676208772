import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { eventually, redisCommand, startRedisSentinelGroup, type RedisSentinelGroupHandle } from '@hermes/testkit';
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

  const turns = async (session_id: string) =>
    (await request(stack.bus, contracts.sessionRead, { user_id: 'alice', session_id })).messages.map((m) => m.content);

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

  it('follows a failover whose old master stays up (SENTINEL FAILOVER): the demoted master is left, and new turns go to the promoted one', async () => {
    const session_id = 'through-a-planned-failover';
    script.on('a turn before the planned failover', [{ content: 'before' }]);
    script.on('a turn after the planned failover', [{ content: 'after' }]);
    const master = await group.masterPort();
    const other = group.nodes.find((n) => n.port !== master)!;
    // The other node is the first test's killed master: back (empty), Sentinel makes it a replica of the current one.
    if (!(await redisCommand(other.port, 'PING').catch(() => undefined))) await other.restart();
    const first = await submit(stack.bus, { user_id: 'alice', session_id, goal: 'a turn before the planned failover' });
    expect(outcomeOf(await watchTask(stack.bus, first).done)).toMatchObject({ kind: 'completed', output: 'before' });

    // Replication is asynchronous: a failover before the replica has the turn would lose it (docs/deploy.md).
    await group.waitForReplicas(30_000);
    // Sentinel refuses (NOGOODSLAVE) until it has seen the replica linked: asked again until it agrees.
    await eventually(
      async () => (await redisCommand(group.sentinel.port, 'SENTINEL', 'FAILOVER', group.masterName)) === '+OK\r\n',
      60_000,
      'Sentinel to start the failover',
    );
    expect(await group.waitForFailover(master, 60_000)).toBe(other.port);
    // The old master is alive and now a replica: a client still writing to it would get READONLY.
    await eventually(async () => (await redisCommand(master, 'ROLE')).startsWith('*5\r\n$5\r\nslave'), 30_000, 'the old master to be a replica');

    const second = await submit(stack.bus, { user_id: 'alice', session_id, goal: 'a turn after the planned failover' });
    expect(outcomeOf(await watchTask(stack.bus, second, 90_000).done)).toMatchObject({ kind: 'completed', output: 'after' });
    expect(await turns(session_id)).toEqual(['a turn before the planned failover', 'before', 'a turn after the planned failover', 'after']);
  }, 180_000);
});
