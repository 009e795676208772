import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmClient, type Permit, type PermitProvider, type RoleEndpoint } from '@hermes/llm';
import { cleanupAll, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';

let llm: ScriptedLlm;
const hello = [{ role: 'user' as const, content: 'hello' }];

/** Records the order of permit events and model requests. */
function tracingPermits(log: string[]): PermitProvider {
  return {
    async acquire() {
      log.push('acquired');
      return { release: async () => void log.push('released') } satisfies Permit;
    },
  };
}

function client(permits: PermitProvider): LlmClient {
  const worker: RoleEndpoint = { baseUrl: llm.baseUrl, apiKey: 'test-key', model: 'worker-model' };
  return new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0, timeoutMs: 5_000, permits });
}

class CheckpointLost extends Error {}

beforeAll(async () => {
  llm = await startScriptedLlm();
});

beforeEach(() => {
  llm.clearQueue();
  llm.resetStats();
});

afterAll(async () => {
  await cleanupAll();
});

describe('LlmClient.chat with work that must finish first (`after`)', () => {
  it('takes the permit while the work runs and calls the model only once it is done', async () => {
    const log: string[] = [];
    llm.setResponder(() => {
      log.push('model called');
      return { content: 'ok' };
    });
    let finish!: () => void;
    const work = new Promise<void>((resolve) => (finish = resolve)).then(() => void log.push('work done'));

    const answer = client(tracingPermits(log)).chat({ role: 'worker', messages: hello, after: work });
    await new Promise((r) => setTimeout(r, 50));
    expect(log).toEqual(['acquired']);
    expect(llm.requests).toHaveLength(0);
    finish();

    expect((await answer).content).toBe('ok');
    expect(log.slice(0, 3)).toEqual(['acquired', 'work done', 'model called']);
  });

  it('when the work fails, gives the permit back, never calls the model, and rejects with that very error', async () => {
    const log: string[] = [];
    const lost = new CheckpointLost('taken over');
    const work = new Promise<void>((_, reject) => setTimeout(() => reject(lost), 20));

    const err = await client(tracingPermits(log))
      .chat({ role: 'worker', messages: hello, after: work })
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    expect(err).toBe(lost);
    expect(log).toEqual(['acquired', 'released']);
    expect(llm.requests).toHaveLength(0);
  });

  it('the work failing wins over a permit that could not be had', async () => {
    const lost = new CheckpointLost('taken over');
    const refusing: PermitProvider = { acquire: () => new Promise((_, reject) => setTimeout(() => reject(new Error('no permit')), 30)) };
    const work = Promise.reject(lost);

    const err = await client(refusing)
      .chat({ role: 'worker', messages: hello, after: work })
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    expect(err).toBe(lost);
    expect(llm.requests).toHaveLength(0);
  });
});
