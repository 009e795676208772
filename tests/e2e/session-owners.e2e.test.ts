import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '@hermes/bus';
import { contracts, teamField } from '@hermes/contracts';
import { eventually } from '@hermes/testkit';
import { API_KEY, startStack, type Stack } from './stack.js';
import { ModelScript } from './model-script.js';
import { outcomeOf, submit, watchTask } from './tasks.js';

// Session ids are scoped by owner (team, user), through every service as real processes: the same
// session id chosen by two users of one team and by the same user id in two teams is three
// sessions. None blocks another (a squatted id), and nothing an owner can ask tells whether another
// owner has a session of that id (issue 17: a 403 against a 200 [] did).
const BOB_KEY = 'test-key-bob-0123456789';
const TEAM_ALICE_KEY = 'test-key-alice-team-q-0123456789';
let stack: Stack;
let model: ModelScript;

beforeAll(async () => {
  stack = await startStack({
    apiKeys: [
      { key: BOB_KEY, user_id: 'bob', roles: ['user'] },
      { key: TEAM_ALICE_KEY, user_id: 'alice', team: 'team-q', roles: ['user'] },
    ],
    // A session held by a running loop fails another task on it at once: a shared id would show.
    serviceEnv: { runtime: { RUNTIME_SESSION_BUSY: 'fail' } },
  });
  model = new ModelScript(stack.llm);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

interface Owner {
  user_id: string;
  team?: string;
  key: string;
}
const OWNERS: Record<string, Owner> = {
  alice: { user_id: 'alice', key: API_KEY },
  bob: { user_id: 'bob', key: BOB_KEY },
  'team-q/alice': { user_id: 'alice', team: 'team-q', key: TEAM_ALICE_KEY },
};

const http = async (owner: Owner, method: string, path: string) => {
  const res = await fetch(`${stack.gatewayUrl}/v1/users/${owner.user_id}${path}`, { method, headers: { authorization: `Bearer ${owner.key}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const contents = async (owner: Owner, sessionId: string) =>
  (await request(stack.bus, contracts.sessionRead, { user_id: owner.user_id, ...teamField(owner.team ?? 'default'), session_id: sessionId })).messages.map(
    (m) => m.content,
  );

describe('session ids scoped by owner', () => {
  it('two users and the same user id in two teams choosing one session id get three sessions: each sees only its own turns, none blocks another', async () => {
    const sessionId = 'project-x';
    // alice's loop holds her session while the others start tasks on the same id: with a shared
    // namespace they would fail session_busy (or, before, session_forbidden).
    const slowGoal = 'alice: a slow answer in project-x';
    // Long enough for the three other tasks to run while it waits (a generous bound on a loaded machine).
    model.on(slowGoal, [{ content: 'alice answer', delayMs: 8000 }]);
    const slow = await submit(stack.bus, { user_id: 'alice', session_id: sessionId, goal: slowGoal });
    const slowDone = watchTask(stack.bus, slow, 60_000).done;
    // Its model call has started, so its loop holds the session (taken before the context is read).
    await eventually(async () => model.requests(slowGoal).length === 1, 15_000, "alice's slow model call");
    for (const [name, owner] of Object.entries(OWNERS).filter(([n]) => n !== 'alice')) {
      const goal = `${name}: my own turn in project-x`;
      model.on(goal, [{ content: `${name} answer` }]);
      const taskId = await submit(stack.bus, { user_id: owner.user_id, session_id: sessionId, goal }, owner.team);
      expect([name, outcomeOf(await watchTask(stack.bus, taskId, 60_000, owner.team).done)]).toEqual([name, { kind: 'completed', output: `${name} answer` }]);
    }
    expect(outcomeOf(await slowDone)).toMatchObject({ kind: 'completed', output: 'alice answer' });

    for (const [name, owner] of Object.entries(OWNERS)) {
      const own = name === 'alice' ? ['alice: a slow answer in project-x', 'alice answer'] : [`${name}: my own turn in project-x`, `${name} answer`];
      expect([name, await contents(owner, sessionId)]).toEqual([name, own]);
      const read = await http(owner, 'GET', `/sessions/${sessionId}`);
      expect([name, read.status, (read.body.messages as { content: string }[]).map((m) => m.content)]).toEqual([name, 200, own]);
      const listed = await http(owner, 'GET', '/sessions');
      expect([name, (listed.body.sessions as { session_id: string; message_count: number }[]).filter((s) => s.session_id === sessionId)]).toEqual([
        name,
        [expect.objectContaining({ session_id: sessionId, message_count: 2 })],
      ]);
    }
  });

  it("another owner's session id is answered exactly as an id nobody used, on every route", async () => {
    model.on('bob: only bob has bob-notes', [{ content: 'noted' }]);
    await watchTask(stack.bus, await submit(stack.bus, { user_id: 'bob', session_id: 'bob-notes', goal: 'bob: only bob has bob-notes' })).done;
    expect(await contents(OWNERS.bob!, 'bob-notes')).toHaveLength(2);

    for (const name of ['alice', 'team-q/alice']) {
      const owner = OWNERS[name]!;
      const probe = async (id: string) => {
        const read = await http(owner, 'GET', `/sessions/${id}`);
        const removed = await http(owner, 'DELETE', `/sessions/${id}`);
        // The ids themselves are echoed back; everything else must match.
        return JSON.parse(JSON.stringify({ read, removed }).replaceAll(id, '<id>')) as unknown;
      };
      expect([name, await probe('bob-notes')]).toEqual([name, await probe('never-used-id')]);
      expect([name, (await probe('bob-notes')) as { read: { status: number } }]).toEqual([
        name,
        expect.objectContaining({ read: { status: 200, body: { session_id: '<id>', messages: [] } } }),
      ]);
    }
    // bob's session is untouched by the others' deletes.
    expect(await contents(OWNERS.bob!, 'bob-notes')).toHaveLength(2);
  });
});
