import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { eventually, type RecordedRequest, type ScriptedResponse } from '@hermes/testkit';
import { goalOf } from './model-script.js';
import { API_KEY, startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';
import { natsHandles } from '@hermes/bus/internal';

const JUDGE = /^You decide what an AI assistant should remember/;
const TEA = 'The user prefers green tea over coffee.';

/** The scripted model: a judge that learns the tea preference, and an agent that answers every goal at once. */
function responder({ body }: RecordedRequest): ScriptedResponse {
  const system = body.messages?.[0]?.content;
  if (typeof system === 'string' && JUDGE.test(system)) {
    const said = JSON.stringify(body.messages?.at(-1)?.content ?? '');
    const memories = /I always drink green tea/.test(said) ? [{ type: 'preference', content: TEA, confidence: 0.9 }] : [];
    return { content: JSON.stringify({ memories }) };
  }
  return { content: `Done: ${goalOf(body) ?? ''}` };
}

/** The system messages the agent's first model call for this goal got, other than the goal-anchoring prompt. */
function backgroundOf(stack: Stack, goal: string): string[] {
  const first = stack.llm.requests.find((r) => goalOf(r.body) === goal);
  if (!first) throw new Error(`the model was never asked about "${goal}"`);
  return (first.body.messages ?? [])
    .slice(1)
    .filter((m) => m.role === 'system')
    .map((m) => String(m.content));
}

/**
 * Long-term memory through every service as real processes: a task's turn is extracted by the
 * judge after the runtime appends it, recalled into the opening context of the user's next task
 * (in another session) and not into another user's, and forgotten over HTTP.
 */
describe('long-term memory across tasks', () => {
  let stack: Stack;
  const dataDir = mkdtempSync(join(tmpdir(), 'hermes-e2e-ltm-'));

  beforeAll(async () => {
    stack = await startStack({ env: { MEMORY_DATA_DIR: dataDir, MEMORY_EXTRACT_DEBOUNCE_MS: '100' } });
    stack.llm.setResponder(responder);
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const run = async (user_id: string, session_id: string, goal: string) => {
    const taskId = await submit(stack.bus, { user_id, session_id, goal });
    expect(outcomeOf(await watchTask(stack.bus, taskId).done)).toMatchObject({ kind: 'completed' });
  };
  const memories = async (user_id: string) => (await request(stack.bus, contracts.memoryList, { user_id })).memories;
  const extractionIdle = async () => {
    const info = await natsHandles(stack.bus).jsm.consumers.info(stack.bus.subjects.streams.memoryJobs, stack.bus.subjects.consumers.memoryExtract);
    return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
  };

  it("recalls what a user's earlier task taught into their next task's context, never into another user's; forgetting ends it", async () => {
    await run('alice', 'ltm-a1', 'Note for later: I always drink green tea, never coffee.');
    const [learnt] = await eventually(async () => ((await memories('alice')).length ? memories('alice') : undefined), 20_000, 'the extracted memory');
    expect(learnt).toMatchObject({
      user_id: 'alice',
      type: 'preference',
      content: TEA,
      status: 'active',
      source: { session_id: 'ltm-a1' },
      provenance: { kind: 'conversation', session_id: 'ltm-a1' },
    });

    const question = 'Which do I prefer, green tea or coffee?';
    await run('alice', 'ltm-a2', question);
    const [background] = backgroundOf(stack, question);
    expect(background).toContain(`(${learnt!.created_at.slice(0, 10)}, preference, confidence 0.90, from conversation) ${TEA}`);

    const bobAsks = 'Which does bob prefer, green tea or coffee?';
    await run('bob', 'ltm-b1', bobAsks);
    expect(backgroundOf(stack, bobAsks)).toEqual([]);

    await eventually(extractionIdle, 20_000, 'extraction to finish');
    const res = await fetch(`${stack.gatewayUrl}/v1/users/alice/memory`, { method: 'DELETE', headers: { authorization: `Bearer ${API_KEY}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ memories_removed: 1, sessions_removed: 2, recordings_removed: 0 });
    expect(await memories('alice')).toEqual([]);
    expect((await request(stack.bus, contracts.sessionRead, { user_id: 'alice', session_id: 'ltm-a1' })).messages).toEqual([]);

    const afterwards = 'After forgetting: do I prefer green tea or coffee?';
    await run('alice', 'ltm-a3', afterwards);
    expect(backgroundOf(stack, afterwards)).toEqual([]);
  });
});
