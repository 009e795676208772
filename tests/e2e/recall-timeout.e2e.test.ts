import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelScript } from './model-script.js';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, stepOf, submit, watchTask } from './tasks.js';

// The memory service embeds with a model (MEMORY_EMBEDDER=llm) whose endpoint holds every request
// until the test lets it go: recall stalls while sessions (locks, context, appends) keep answering,
// the way a slow embedding provider or vector store looks. A stack of its own.
const DIMENSIONS = 16;
let stack: Stack;
let script: ModelScript;
let embeddings: Server;
let stalled = true;
const held: { req: IncomingMessage; res: ServerResponse; body: string }[] = [];
let embedRequests = 0;

function answer(_req: IncomingMessage, res: ServerResponse, body: string): void {
  const inputs = (JSON.parse(body) as { input: string | string[] }).input;
  const n = Array.isArray(inputs) ? inputs.length : 1;
  res.setHeader('content-type', 'application/json');
  res.end(
    JSON.stringify({
      object: 'list',
      data: Array.from({ length: n }, (_, index) => ({
        object: 'embedding',
        index,
        embedding: Array.from({ length: DIMENSIONS }, (_, i) => (i === index % DIMENSIONS ? 1 : 0)),
      })),
      model: 'stalling-embedder',
      usage: { prompt_tokens: n, total_tokens: n },
    }),
  );
}

beforeAll(async () => {
  embeddings = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      embedRequests++;
      if (stalled) held.push({ req, res, body });
      else answer(req, res, body);
    });
  });
  await new Promise<void>((r) => embeddings.listen(0, '127.0.0.1', r));
  const port = (embeddings.address() as AddressInfo).port;
  stack = await startStack({
    serviceEnv: {
      memory: {
        MEMORY_EMBEDDER: 'llm',
        MEMORY_EMBEDDING_DIMENSIONS: String(DIMENSIONS),
        HERMES_EMBEDDER_BASE_URL: `http://127.0.0.1:${port}/v1`,
        HERMES_EMBEDDER_API_KEY: 'stalling',
        HERMES_MODEL_EMBEDDER: 'stalling-embedder',
      },
    },
  });
  script = new ModelScript(stack.llm);
}, 120_000);

afterAll(async () => {
  for (const h of held) h.res.destroy();
  await stack?.stop();
  await new Promise((r) => embeddings?.close(r));
});

describe('a long-term memory recall that times out', () => {
  it('is one warning event on the task, which goes on without the memories and completes', async () => {
    const goal = 'recall-timeout: answer without memories';
    script.on(goal, []);
    // Generous: the recall waits 2 s (RECALL_TIMEOUT_MS), and a loaded machine may add seconds.
    const watch = watchTask(stack.bus, await submit(stack.bus, { user_id: 'recall-alice', goal }), 90_000);
    const warning = await watch.next((e) => stepOf(e, 'warning') !== undefined, 60_000);
    expect(stepOf(warning, 'warning')?.detail).toMatchObject({ code: 'memory_recall_timed_out', timeout_ms: 2000, started_without: 'long_term_memories' });
    // The recall reached the embedder and is still held there: the task did not wait for it.
    expect(embedRequests).toBeGreaterThanOrEqual(1);
    const events = await watch.done;
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: `Done: ${goal}` });
    expect(events.filter((e) => stepOf(e, 'warning'))).toHaveLength(1);
  }, 120_000);

  it('a recall the embedder answers in time adds no warning', async () => {
    stalled = false;
    for (const h of held.splice(0)) answer(h.req, h.res, h.body);
    const goal = 'recall-timeout: memory answers';
    script.on(goal, []);
    const events = await watchTask(stack.bus, await submit(stack.bus, { user_id: 'recall-alice', goal }), 90_000).done;
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: `Done: ${goal}` });
    expect(events.filter((e) => stepOf(e, 'warning'))).toHaveLength(0);
  }, 120_000);
});
