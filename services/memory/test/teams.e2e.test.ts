import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import { cleanupAll, lastUserMessageText } from '@hermes/testkit';
import { EXTRACTION_INSTRUCTIONS } from '../src/longterm/extraction-prompt.js';
import { eventually } from './support.js';
import { startLongTermStack } from './longterm-stack.js';

/** Owners named "alice" in three teams: three different users. */
const ALICE = { user_id: 'alice' };
const ALICE_A = { user_id: 'alice', team: 'team-a' };
const ALICE_B = { user_id: 'alice', team: 'team-b' };

describe('memory of teams: a user id means something only inside its team', () => {
  let stack: Awaited<ReturnType<typeof startLongTermStack>> | undefined;
  let client: Bus;

  const say = (owner: { user_id: string; team?: string }, session_id: string, content: string) =>
    request(client, contracts.sessionAppend, {
      ...owner,
      session_id,
      messages: [
        { role: 'user', content },
        { role: 'assistant', content: 'noted' },
      ],
    });
  const read = async (owner: { user_id: string; team?: string }, session_id: string) =>
    (await request(client, contracts.sessionRead, { ...owner, session_id })).messages.map((m) => m.content);

  beforeAll(async () => {
    // The judge remembers the user's secret word, whatever it is.
    stack = await startLongTermStack({
      keyPrefix: 'hermes-teams:',
      responder: ({ body }) => {
        if (body.messages?.[0]?.content !== EXTRACTION_INSTRUCTIONS) return { content: 'summary' };
        const word = /secret word is (\w+)/.exec(lastUserMessageText(body))?.[1];
        return { content: JSON.stringify({ memories: word ? [{ type: 'fact', content: `The user's secret word is ${word}.`, confidence: 0.9 }] : [] }) };
      },
    });
    client = stack.client;
  });

  afterAll(async () => {
    await stack?.close();
    await cleanupAll();
  });

  it('gives the same session id of the same user id in three teams three sessions, none blocking another', async () => {
    const appended = await say(ALICE_A, 'plans', 'team a talk');
    expect(appended.messages[0]).toMatchObject({ user_id: 'alice', session_id: 'plans' });
    await say(ALICE_B, 'plans', 'team b talk');
    await say(ALICE, 'plans', 'default team talk');
    expect(await read(ALICE_A, 'plans')).toEqual(['team a talk', 'noted']);
    expect(await read(ALICE_B, 'plans')).toEqual(['team b talk', 'noted']);
    expect(await read(ALICE, 'plans')).toEqual(['default team talk', 'noted']);
    // A session bob of team a took is his: alice of team b using the same id is not refused.
    await say({ user_id: 'bob', team: 'team-a' }, 'squatted', 'bob was here');
    expect(await read(ALICE_B, 'squatted')).toEqual([]);
    await say(ALICE_B, 'squatted', 'mine');
    expect(await read(ALICE_B, 'squatted')).toEqual(['mine', 'noted']);
    // Each team lists its own alice's sessions, under the ids she used.
    const listed = await request(client, contracts.sessionList, { ...ALICE_B });
    expect(listed.sessions.map((s) => s.session_id).sort()).toEqual(['plans', 'squatted']);
    // A lock on one team's session does not hold the other's.
    const lock = await request(client, contracts.sessionLock, { ...ALICE_A, session_id: 'plans', wait_ms: 0 });
    const other = await request(client, contracts.sessionLock, { ...ALICE_B, session_id: 'plans', wait_ms: 0 });
    expect(other.token).not.toBe(lock.token);
    for (const [owner, token] of [
      [ALICE_A, lock.token],
      [ALICE_B, other.token],
    ] as const) {
      expect((await request(client, contracts.sessionUnlock, { ...owner, session_id: 'plans', token })).released).toBe(true);
    }
  });

  it("keeps long-term memories per team: one team's alice never recalls, lists or forgets another's", async () => {
    await say(ALICE_A, 'ltm-a', 'my secret word is aubergine');
    await say(ALICE_B, 'ltm-b', 'my secret word is blueberry');
    const listOf = async (owner: { user_id: string; team?: string }) => (await request(client, contracts.memoryList, { ...owner })).memories;
    const ofA = await eventually(async () => ((await listOf(ALICE_A)).length > 0 ? listOf(ALICE_A) : undefined), 'team a memory', 20_000);
    const ofB = await eventually(async () => ((await listOf(ALICE_B)).length > 0 ? listOf(ALICE_B) : undefined), 'team b memory', 20_000);
    expect(ofA.map((m) => m.content)).toEqual(["The user's secret word is aubergine."]);
    expect(ofA[0]).toMatchObject({ user_id: 'alice', team: 'team-a', source: { session_id: 'ltm-a' } });
    expect(ofB.map((m) => m.content)).toEqual(["The user's secret word is blueberry."]);
    expect(await listOf(ALICE)).toEqual([]);

    const recalled = await request(client, contracts.memoryRecall, { ...ALICE_B, query: "what is the user's secret word, aubergine?", k: 5 });
    expect(recalled.memories.map((m) => m.memory.content)).toEqual(["The user's secret word is blueberry."]);

    // Team a's memory id named by team b's alice (or the default team's) is not theirs to forget.
    for (const owner of [ALICE_B, ALICE]) {
      await expect(request(client, contracts.memoryForgetOne, { ...owner, memory_id: ofA[0]!.memory_id })).rejects.toMatchObject({
        wire: { code: 'not_found' },
      });
    }
    expect(await listOf(ALICE_A)).toEqual(ofA);

    const forgotten = await request(client, contracts.memoryForget, { ...ALICE_B });
    expect(forgotten.memories_removed).toBe(1);
    expect(await listOf(ALICE_B)).toEqual([]);
    expect((await listOf(ALICE_A)).map((m) => m.content)).toEqual(["The user's secret word is aubergine."]);
    expect(await read(ALICE_A, 'plans')).toEqual(['team a talk', 'noted']);
  });
});
