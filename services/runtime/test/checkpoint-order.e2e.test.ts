import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, startNatsServer, startScriptedLlm, type NatsServerHandle, type ScriptedLlm } from '@hermes/testkit';
import { makeJob as job, okReply, runtimeFixture, type RuntimeFixture } from './runtime-fixture.js';

let nats: NatsServerHandle;
let llm: ScriptedLlm;
let f: RuntimeFixture;

const toolSaw: { step: number; checkpointStep?: number; pending?: boolean }[] = [];

beforeAll(async () => {
  [nats, llm] = await Promise.all([startNatsServer(), startScriptedLlm()]);
  // The toolbus stand-in reads the checkpoint as each call reaches it: what a runtime taking over would resume from.
  f = await runtimeFixture(nats.url, llm, {
    maxAttempts: 1,
    // Writes that take a while, so a call that does not wait for one would overtake it.
    checkpointDelayMs: 100,
    onToolCall: async (req) => {
      const cp = await (await f.otherRuntime()).load(req.task_id + '-main');
      toolSaw.push({ step: req.step, ...(cp ? { checkpointStep: cp.step, pending: cp.pending } : {}) });
      return okReply(req, { q: req.arguments });
    },
  });
});

afterAll(async () => {
  await f?.close();
  await cleanupAll();
});

describe('checkpoints around a step', () => {
  it('a tool call goes out only once the turn that asked for it is checkpointed; its results ride on the toolbus records, not a checkpoint write', async () => {
    const j = job();
    const seen: { request: number; step?: number; pending?: boolean; toolMessages?: number }[] = [];
    let n = 0;
    llm.setResponder(async ({ body }) => {
      const request = ++n;
      const cp = await (await f.otherRuntime()).load(j.job_id);
      seen.push({ request, ...(cp ? { step: cp.step, pending: cp.pending, toolMessages: cp.messages.filter((m) => m.role === 'tool').length } : {}) });
      const tools = (body.messages ?? []).filter((m) => m.role === 'tool').length;
      return tools < 3 ? { toolCalls: [{ name: 'web_search', arguments: { q: `query ${tools + 1}` } }] } : { content: 'done' };
    });

    await f.runner.run(j, await f.deliver(j));

    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'done' }]);
    // Each call found the turn that asked for it stored, with its calls pending (a resume re-sends them and the toolbus replays).
    expect(toolSaw).toEqual([
      { step: 1, checkpointStep: 1, pending: true },
      { step: 2, checkpointStep: 2, pending: true },
      { step: 3, checkpointStep: 3, pending: true },
    ]);
    // The next LLM call does not wait for a write of the results: the checkpoint is still the turn before.
    expect(seen).toEqual([
      { request: 1 },
      { request: 2, step: 1, pending: true, toolMessages: 0 },
      { request: 3, step: 2, pending: true, toolMessages: 1 },
      { request: 4, step: 3, pending: true, toolMessages: 2 },
    ]);
  });
});
