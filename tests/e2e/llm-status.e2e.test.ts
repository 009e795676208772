import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEventData } from '@hermes/contracts';
import { startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, runTask } from './tasks.js';
import { hermesCli } from './tool-fixtures.js';

// A stack whose model is an Ollama (the scripted server in its ollama mode, whose Modelfile sets
// num_ctx 8192) in a pool that configures no context_tokens: each service asks /api/show at start,
// writes what it knows of the pool's server, and the runtime fits its prompts into that window.
let ollama: ScriptedLlm;
let stack: Stack;

beforeAll(async () => {
  ollama = await startScriptedLlm({ profile: 'ollama', contextTokens: 40_960, numCtx: 8192 });
  stack = await startStack({ modelBaseUrl: ollama.baseUrl, env: { LLM_POOLS: JSON.stringify([{ name: 'local-ollama', capacity: 2, provider: 'ollama' }]) } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await ollama?.close();
});

describe('hermes llm status on a running stack', () => {
  it("shows the Ollama pool's profile, the window detected from /api/show and what the server supports", async () => {
    const { stdout } = await hermesCli(stack.natsUrl, ['llm', 'status', '--json']);
    const pools = JSON.parse(stdout) as {
      pool: string;
      servers: {
        role: string;
        model: string;
        provider: string;
        provider_name: string;
        context: unknown;
        supports: { params: string[] };
        reported_by: string;
      }[];
    }[];
    const pool = pools.find((p) => p.pool === 'local-ollama');
    expect(pool?.servers.map((s) => s.role)).toEqual(['planner', 'summarizer', 'worker']);
    for (const s of pool!.servers) {
      expect(s).toMatchObject({
        model: 'scripted-demo',
        provider: 'ollama',
        provider_name: 'ollama',
        context: { tokens: 8192, source: 'detected', detected_from: 'num_ctx' },
      });
      expect(s.supports.params).not.toContain('parallel_tool_calls');
      expect(['runtime', 'memory']).toContain(s.reported_by);
    }
    // Asked on Ollama's native API by the model's name, once per service that calls models.
    expect(new Set(ollama.showRequests)).toEqual(new Set(['scripted-demo']));

    const table = await hermesCli(stack.natsUrl, ['llm', 'status']);
    expect(table.stdout).toMatch(
      /^local-ollama +worker +scripted-demo +ollama +8192 \(detected: num_ctx at \S+\) +params temperature,top_p,max_tokens,seed,stop;/m,
    );
  });

  it("the runtime fits the opening into the detected window: inputs that 128k would take are input_too_large in Ollama's 8k", async () => {
    // ~7,500 tokens of input: more than 8,192 less the answer's 4,096 and the tools' schemas.
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal: 'summarise these notes', inputs: { notes: 'word '.repeat(6_000) } });

    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'input_too_large' });
    const details = taskEventData(events.at(-1)!, 'failed')!.error.details as { window_tokens: number };
    expect(details.window_tokens).toBeLessThan(8192 - 4096);
    expect(ollama.requests.filter((r) => JSON.stringify(r.body.messages).includes('summarise these notes'))).toHaveLength(0);
  });

  it('warns when the live runtimes cannot reach the cap: one runtime of RUNTIME_CONCURRENCY 8 behind a capacity of 20, and not at 2', async () => {
    // A pool has a state, and a capacity to change, from its first call on.
    await runTask(stack.bus, { user_id: 'alice', goal: 'say hello' });
    const before = await hermesCli(stack.natsUrl, ['llm', 'status', '--json']);
    const pool = (JSON.parse(before.stdout) as { pool: string; runtimes?: unknown; warning?: string }[]).find((p) => p.pool === 'local-ollama');
    expect(pool).toMatchObject({ runtimes: { replicas: 1, concurrency: 8 } });
    expect(pool?.warning).toBeUndefined();
    if (process.env.HERMES_CAPTURE_FIXTURES) {
      const kv = await stack.bus.kv('llmSemaphore');
      for await (const key of await kv.keys('runner.>'))
        writeFileSync(`${process.env.HERMES_CAPTURE_FIXTURES}/runner-capacity.json`, (await kv.get(key))!.string());
    }
    expect((await hermesCli(stack.natsUrl, ['llm', 'status'])).stdout).not.toContain('warning:');

    await hermesCli(stack.natsUrl, ['llm', 'capacity', 'local-ollama', '20']);
    try {
      const table = await hermesCli(stack.natsUrl, ['llm', 'status']);
      expect(table.stdout).toContain(
        'warning: pool local-ollama: capacity 20 cannot be reached: 1 runtime run at most 8 jobs at once (RUNTIME_CONCURRENCY summed); raise RUNTIME_CONCURRENCY or add runtime replicas',
      );
      const json = JSON.parse((await hermesCli(stack.natsUrl, ['llm', 'status', '--json'])).stdout) as { pool: string; warning?: string }[];
      expect(json.find((p) => p.pool === 'local-ollama')?.warning).toMatch(/^capacity 20 cannot be reached/);
    } finally {
      await hermesCli(stack.natsUrl, ['llm', 'capacity', 'local-ollama', '2']);
    }
  });
});
