import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { eventually } from '@hermes/testkit';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { callTools, ModelScript, toolMessages } from './model-script.js';
import { outcomeOf, runTask } from './tasks.js';

// `remember` and `recall`, built-in tools of the toolbus, through every process: runtime →
// toolbus → memory service (queued write, embedded vector store) and back, on the shared stack.
let stack: SharedStack;
let model: ModelScript;

beforeAll(async () => {
  stack = await sharedStack();
  model = new ModelScript(stack.llm);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

async function memoriesOf(userId: string, team?: string) {
  return (await request(stack.bus, contracts.memoryList, { user_id: userId, ...(team ? { team } : {}) }, { timeoutMs: 3000 })).memories;
}

describe('remember and recall tools', () => {
  it('a memory the model stores for one user is recalled by a later task of that user, and by nobody else', async () => {
    const fact = 'Carol prefers meetings after 10am on weekdays';
    const rememberGoal = 'note when Carol likes meetings';
    model.on(rememberGoal, [callTools({ id: 'r1', name: 'remember', arguments: { content: fact, type: 'preference' } }), { content: 'Noted.' }]);
    const first = await runTask(stack.bus, { user_id: 'carol', goal: rememberGoal });
    expect(outcomeOf(first.events).kind).toBe('completed');
    const [stored] = toolMessages(model.requests(rememberGoal)[1]!.body);
    expect(stored!.content).toMatchObject({ ok: true, result: { remembered: true } });

    // The write is queued; the memory service stores it for carol only, with the type the model gave.
    const memories = await eventually(
      async () => {
        const all = await memoriesOf('carol');
        return all.some((m) => m.content === fact) && all;
      },
      10_000,
      "carol's memory",
    );
    expect(memories.find((m) => m.content === fact)).toMatchObject({ type: 'preference', status: 'active', user_id: 'carol' });

    const recallGoal = 'when should the meeting with Carol be';
    model.on(recallGoal, [callTools({ id: 'q1', name: 'recall', arguments: { query: 'meetings after 10am on weekdays' } }), { content: 'After 10am.' }]);
    await runTask(stack.bus, { user_id: 'carol', goal: recallGoal });
    const [recalled] = toolMessages(model.requests(recallGoal)[1]!.body);
    expect(recalled!.content.ok).toBe(true);
    expect((recalled!.content.result as { memories: { content: string }[] }).memories.map((m) => m.content)).toContain(fact);

    // Another user asking the same thing gets nothing of carol's: the user comes from the call, not the arguments.
    const otherGoal = 'when does anyone like meetings';
    model.on(otherGoal, [
      callTools({ id: 'q2', name: 'recall', arguments: { query: 'meetings after 10am on weekdays', user_id: 'carol' } }),
      callTools({ id: 'q3', name: 'recall', arguments: { query: 'meetings after 10am on weekdays' } }),
      { content: 'Nothing known.' },
    ]);
    await runTask(stack.bus, { user_id: 'dave', goal: otherGoal });
    const afterBoth = toolMessages(model.requests(otherGoal)[2]!.body);
    // A user_id argument is not part of the tool's schema: refused, not obeyed.
    expect(afterBoth[0]!.content).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(afterBoth[1]!.content).toMatchObject({ ok: true, result: { memories: [] } });
  });

  it("the same user id in another team is another user: each team's erin remembers and recalls only her own", async () => {
    const facts = { default: 'Erin prefers tea in the morning meetings', 'team-m': 'Erin prefers coffee in the morning meetings' };
    for (const [team, fact] of Object.entries(facts)) {
      const goal = `${team}: note what Erin drinks`;
      model.on(goal, [callTools({ id: 'r1', name: 'remember', arguments: { content: fact } }), { content: 'Noted.' }]);
      expect(outcomeOf((await runTask(stack.bus, { user_id: 'erin', goal }, undefined, team)).events).kind).toBe('completed');
    }
    // Both writes are queued; each lands with its own owner only.
    for (const [team, fact] of Object.entries(facts)) {
      await eventually(async () => ((await memoriesOf('erin', team)).some((m) => m.content === fact) ? true : undefined), 10_000, `${team} erin's memory`);
    }
    expect((await memoriesOf('erin')).map((m) => m.content)).toEqual([facts.default]);
    expect((await memoriesOf('erin', 'team-m')).map((m) => m.content)).toEqual([facts['team-m']]);

    const recallGoal = 'team-m: what does Erin drink in the morning meetings';
    model.on(recallGoal, [callTools({ id: 'q1', name: 'recall', arguments: { query: 'what Erin drinks in the morning meetings' } }), { content: 'Coffee.' }]);
    await runTask(stack.bus, { user_id: 'erin', goal: recallGoal }, undefined, 'team-m');
    const [recalled] = toolMessages(model.requests(recallGoal)[1]!.body);
    expect(recalled!.content.ok).toBe(true);
    expect((recalled!.content.result as { memories: { content: string }[] }).memories.map((m) => m.content)).toEqual([facts['team-m']]);
  });
});
