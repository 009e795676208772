import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmClient, type RoleEndpoint } from '@hermes/llm';
import { cleanupAll, startNatsServer, startScriptedLlm, type NatsServerHandle, type ScriptedLlm } from '@hermes/testkit';
import { CheckpointStore, type Checkpoint } from '../src/checkpoint-store.js';
import { JobRunner } from '../src/job-runner.js';
import { ToolCaller } from '../src/tool-caller.js';
import { MODEL, makeJob as job, runtimeFixture, type RuntimeFixture } from './runtime-fixture.js';
import { silentLogger } from './support.js';

let nats: NatsServerHandle;
let llm: ScriptedLlm;
let f: RuntimeFixture;

/** A store whose writes take a while, so a call that does not wait for one would overtake it. */
class SlowCheckpointStore extends CheckpointStore {
  override async save(cp: Checkpoint): Promise<void> {
    await sleep(100);
    return super.save(cp);
  }
}

beforeAll(async () => {
  [nats, llm] = await Promise.all([startNatsServer(), startScriptedLlm()]);
  f = await runtimeFixture(nats.url, llm);
});

afterAll(async () => {
  await f?.close();
  await cleanupAll();
});

describe('checkpoints around a step', () => {
  it('every LLM call after a tool call goes out only once the tool results are checkpointed', async () => {
    const worker: RoleEndpoint = { baseUrl: llm.baseUrl, apiKey: 'test-key', model: MODEL };
    const runner = new JobRunner({
      bus: f.bus,
      llm: new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0, timeoutMs: 5_000 }),
      logger: silentLogger,
      maxAttempts: 1,
      checkpoints: new SlowCheckpointStore(await f.bus.kv(f.bus.subjects.buckets.checkpoints)),
      tools: new ToolCaller({ bus: f.bus, requestTimeoutMs: 3_000, approvalPollMs: 10_000 }),
      limits: { maxSteps: 10, maxRepeats: 2 },
    });
    const j = job();
    const seen: { request: number; step?: number; pending?: boolean; toolMessages?: number }[] = [];
    let n = 0;
    // The model reads the checkpoint as each request reaches it: what a runtime taking over would resume from.
    llm.setResponder(async ({ body }) => {
      const request = ++n;
      const cp = await (await f.otherRuntime()).load(j.job_id);
      seen.push({ request, ...(cp ? { step: cp.step, pending: cp.pending, toolMessages: cp.messages.filter((m) => m.role === 'tool').length } : {}) });
      const tools = (body.messages ?? []).filter((m) => m.role === 'tool').length;
      return tools < 3 ? { toolCalls: [{ name: 'web_search', arguments: { q: `query ${tools + 1}` } }] } : { content: 'done' };
    });

    await runner.run(j, await f.deliver(j));

    expect(await f.results()).toMatchObject([{ outcome: 'succeeded', output: 'done' }]);
    expect(seen).toEqual([
      { request: 1 },
      { request: 2, step: 1, pending: false, toolMessages: 1 },
      { request: 3, step: 2, pending: false, toolMessages: 2 },
      { request: 4, step: 3, pending: false, toolMessages: 3 },
    ]);
  });
});
