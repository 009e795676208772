import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import type { ChatResult } from '@hermes/llm';
import { cleanupAll, startNatsServer, type NatsServerHandle } from '@hermes/testkit';
import { StepEvents } from '../src/step-events.js';
import { makeJob } from './runtime-fixture.js';
import { connectBus, eventually, silentLogger, taskEvents, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

let nats: NatsServerHandle;
let bus: Bus;

beforeAll(async () => {
  nats = await startNatsServer();
  bus = await connectBus(nats.url, uniquePrefix('stepev'));
  await bus.ensureStreams(['taskEvents']);
});

afterAll(async () => {
  await bus?.drain();
  await cleanupAll();
});

const answer: ChatResult = {
  content: null,
  toolCalls: [{ id: 'c1', name: 'echo', arguments: '{}' }],
  finishReason: 'tool_calls',
  model: 'm',
  usage: { input_tokens: 3, output_tokens: 2 },
};
const reply = (step: number) => ({ call_id: `call-${step}`, status: 'ok' as const, result: { step } });

/** `step` events of the job's task as stored: "<kind>:<step>", oldest first. */
async function stored(taskId: string): Promise<string[]> {
  return (await taskEvents(bus, taskId)).map((e) => {
    const d = e.data as { kind: string; step: number };
    return `${d.kind}:${d.step}`;
  });
}

describe('step events', () => {
  it('hold a tool result event until the next event of the job, which it precedes on the subject', async () => {
    const job = makeJob();
    const events = new StepEvents({ bus, logger: silentLogger, holdMs: 5_000 });
    events.llmCall(job, 1, answer);
    events.toolCall(job, 1, 0, 'echo', '{}');
    events.toolResult(job, 1, 0, 'echo', reply(1));
    await eventually(async () => (await stored(job.task_id)).length === 2, 5_000, 'the first two events');
    await natsHandles(bus).nc.flush();
    await sleep(100);
    expect(await stored(job.task_id)).toEqual(['llm_call:1', 'tool_call:1']);
    events.llmCall(job, 2, answer);
    await eventually(async () => (await stored(job.task_id)).length === 3 + 1, 5_000, 'the held result and the next LLM call');
    expect(await stored(job.task_id)).toEqual(['llm_call:1', 'tool_call:1', 'tool_result:1', 'llm_call:2']);
  });

  it('send a held result on their own after the hold time, and at once on flush', async () => {
    const job = makeJob();
    const events = new StepEvents({ bus, logger: silentLogger, holdMs: 150 });
    events.toolResult(job, 1, 0, 'echo', reply(1));
    const heldSince = Date.now();
    await eventually(async () => (await stored(job.task_id)).length === 1, 5_000, 'the result after the hold');
    expect(Date.now() - heldSince).toBeGreaterThanOrEqual(140);

    const slow = new StepEvents({ bus, logger: silentLogger, holdMs: 60_000 });
    slow.toolResult(job, 2, 0, 'echo', reply(2));
    await slow.flush();
    expect(await stored(job.task_id)).toEqual(['tool_result:1', 'tool_result:2']);
  });

  it('send a result at once with holdMs 0', async () => {
    const job = makeJob();
    const events = new StepEvents({ bus, logger: silentLogger, holdMs: 0 });
    events.toolResult(job, 1, 0, 'echo', reply(1));
    await natsHandles(bus).nc.flush();
    await eventually(async () => (await stored(job.task_id)).length === 1, 2_000, 'the result');
  });
});
