import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { decodeJson, type Bus } from '@hermes/bus';
import { ToolCallReply, validate } from '@hermes/contracts';
import { cleanupAll, freePort, startChildService, startNatsServer, type ChildService } from '@hermes/testkit';
import { defineTool, hostToolProvider, type ToolProvider } from '@hermes/tool-sdk';
import { callRequest, callTool, connect, freshPrefix, waitForTool } from './helpers.js';
import { natsHandles } from '@hermes/bus/internal';

// The built toolbus as a process of its own (npm test builds first); it must outlive everything below.
const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const mcpServer = fileURLToPath(new URL('./fixtures/hostile-mcp-server.mjs', import.meta.url));
const SEED = Number(process.env.HERMES_FUZZ_SEED ?? Date.now() % 1_000_000);
const ROLES = ['admin'];
const PROVIDED = 'shape_echo';
const MCP_TOOL = 'hostile_hostile';

let bus: Bus;
let toolbus: ChildService;
let provider: ToolProvider;
let providerNc: NatsConnection;
let healthPort: number;
let dir: string;
/** What the provider's tool answers, by key: values the test builds (without recursion) and hands over. */
const results = new Map<string, unknown>();

beforeAll(async () => {
  const nats = await startNatsServer();
  const prefix = freshPrefix();
  bus = await connect(nats.url, prefix);
  dir = mkdtempSync(join(tmpdir(), 'hermes-limits-'));
  const configFile = join(dir, 'mcp.json');
  writeFileSync(configFile, JSON.stringify({ servers: { hostile: { transport: 'stdio', command: process.execPath, args: [mcpServer] } } }));
  healthPort = await freePort();
  toolbus = await startChildService({
    name: 'toolbus',
    entry,
    env: {
      NATS_URL: nats.url,
      HERMES_SUBJECT_PREFIX: prefix,
      HEALTH_PORT: String(healthPort),
      MCP_CONFIG_FILE: configFile,
      MCP_CONFIG_WATCH: 'false',
      TOOL_TASK_CHECK: 'false',
      // tool-sdk providers do not announce by default: found by a discovery round, here every 2 s.
      // Not faster: an instance is kept 2.5 intervals and a round waits a fifth of one for replies,
      // and the provider shares this busy test process (at 300 ms, 60 ms replies and a 1 s keep
      // dropped it mid-run on a loaded machine: provider_unavailable).
      TOOL_SRV_DISCOVERY_INTERVAL_MS: '2000',
      LOG_LEVEL: 'error',
    },
    healthPort,
    readyTimeoutMs: 60_000,
  });
  const tool = defineTool(
    { name: PROVIDED, description: 'answers the value stored under key', parameters: Type.Object({ key: Type.String() }, { additionalProperties: false }) },
    async ({ key }) => results.get(key) ?? { missing: key },
  );
  // The provider on a NATS connection of its own, as a team hosting tools runs it.
  providerNc = await natsConnect({ servers: nats.url, name: 'fuzzer' });
  provider = await hostToolProvider({ nc: providerNc, prefix, provider: 'fuzzer', tools: [tool] });
  await waitForTool(bus, PROVIDED, ROLES);
  await waitForTool(bus, MCP_TOOL, ROLES);
}, 90_000);

afterAll(async () => {
  await provider?.stop(1_000);
  await providerNc?.drain();
  await bus?.drain();
  await cleanupAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `fn` over `items`, `width` at a time. */
async function eachLimited<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

const call = (tool: string, args: string) => callTool(bus, callRequest({ tool, arguments: args, roles: ROLES }), 60_000);

/** `n` nested objects as a value, built without recursion. */
function deepValue(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { k: v };
  return v;
}

// Hostile argument texts a model could produce: each must be refused as invalid_arguments before the tool runs.
const depth = fc.oneof(fc.integer({ min: 33, max: 400 }), fc.integer({ min: 400, max: 100_000 }));
const hostileArguments = fc.oneof(
  depth.map((n) => ({ kind: `deep ${n}`, text: `{"key":"a","x":${'['.repeat(n)}${']'.repeat(n)}}` })),
  depth.map((n) => ({ kind: `deep almost-JSON ${n}`, text: `{'key': 'a', x: ${'{"a":'.repeat(n)}` })),
  fc.integer({ min: 10_001, max: 40_000 }).map((n) => ({ kind: `wide array ${n}`, text: `{"key":"a","x":[${'1,'.repeat(n - 1)}1]}` })),
  fc.integer({ min: 1_001, max: 3_000 }).map((n) => ({ kind: `wide object ${n}`, text: `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}` })),
  fc.integer({ min: 256 * 1024 + 1, max: 400 * 1024 }).map((n) => ({ kind: `long string ${n}`, text: `{"key":"${'y'.repeat(n)}"}` })),
  fc
    .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.integer({ min: 0, max: 10 }), fc.jsonValue({ maxDepth: 2 }))
    .map(([k, at, v]) => ({ kind: `pollution ${k} at ${at}`, text: `{"key":"a","x":${'{"n":'.repeat(at)}{"${k}":${JSON.stringify(v)}}${'}'.repeat(at)}}` })),
  fc
    .jsonValue({ maxDepth: 3 })
    .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
    .map((v) => ({ kind: 'not an object', text: JSON.stringify(v) })),
  fc
    .record({ key: fc.oneof(fc.integer(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 })), extra: fc.option(fc.string(), { nil: undefined }) })
    .map((v) => ({ kind: 'wrong types', text: JSON.stringify(v) })),
);

// Results a remote provider (tool SDK) returns: too deep, too wide, too many keys, polluted, too large for the bus.
const hostileProviderResult = fc.oneof(
  {
    arbitrary: fc
      .oneof(fc.integer({ min: 33, max: 2_000 }), fc.integer({ min: 20_000, max: 100_000 }))
      .map((n) => ({ kind: `deep ${n}`, value: deepValue(n) })),
    weight: 4,
  },
  { arbitrary: fc.integer({ min: 100_001, max: 150_000 }).map((n) => ({ kind: `wide ${n}`, value: { list: new Array<number>(n).fill(0) } })), weight: 4 },
  {
    arbitrary: fc
      .integer({ min: 10_001, max: 20_000 })
      .map((n) => ({ kind: `keys ${n}`, value: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])) })),
    weight: 4,
  },
  {
    arbitrary: fc
      .constantFrom('__proto__', 'constructor', 'prototype')
      .map((k) => ({ kind: `pollution ${k}`, value: JSON.parse(`{"a":{"${k}":{"polluted":true}}}`) as unknown })),
    weight: 4,
  },
  { arbitrary: fc.integer({ min: 1_100_000, max: 1_500_000 }).map((n) => ({ kind: `larger than the bus ${n}`, value: 'z'.repeat(n) })), weight: 1 },
);

// Results an MCP server sends (over stdio, by a hand-written server that can send anything).
const hostileMcpResult = fc.oneof(
  { arbitrary: fc.oneof(fc.integer({ min: 33, max: 500 }), fc.integer({ min: 500, max: 100_000 })).map((size) => ({ shape: 'deep', size })), weight: 4 },
  { arbitrary: fc.oneof(fc.integer({ min: 33, max: 500 }), fc.integer({ min: 500, max: 100_000 })).map((size) => ({ shape: 'deep-error', size })), weight: 4 },
  { arbitrary: fc.integer({ min: 100_001, max: 150_000 }).map((size) => ({ shape: 'wide', size })), weight: 4 },
  { arbitrary: fc.integer({ min: 10_001, max: 15_000 }).map((size) => ({ shape: 'keys', size })), weight: 4 },
  // 4 MiB lines each: a few are enough.
  { arbitrary: fc.integer({ min: 4 * 1024 * 1024 + 1, max: 4 * 1024 * 1024 + 1000 }).map((size) => ({ shape: 'text', size })), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 1000 }).map((size) => ({ shape: 'proto', size })), weight: 4 },
);

/** The reply is a structured tool error the model can read: the contract's shape, the code, not retryable. */
function expectToolError(reply: ToolCallReply, code: string, what: string): void {
  expect(validate(ToolCallReply, reply).ok, what).toBe(true);
  expect(reply.status, what).toBe('error');
  expect(reply.error?.code, what).toBe(code);
  expect(reply.error?.retryable, what).toBe(false);
}

describe('toolbus under hostile tool arguments and results', () => {
  it('refuses hostile arguments, provider results and MCP results with structured errors, keeps running, and serves normal calls afterwards', async () => {
    const started = Date.now();
    const args = fc.sample(hostileArguments, { numRuns: 1_000, seed: SEED });
    const fromProvider = fc.sample(hostileProviderResult, { numRuns: 150, seed: SEED + 1 });
    const fromMcp = fc.sample(hostileMcpResult, { numRuns: 150, seed: SEED + 2 });

    const replayCheck: { args: string; first: ToolCallReply; key: string }[] = [];
    await eachLimited(args, 16, async ({ kind, text }) => {
      const req = callRequest({ tool: PROVIDED, arguments: text, roles: ROLES });
      const reply = await callTool(bus, req, 60_000);
      expectToolError(reply, 'invalid_arguments', kind);
      expect(reply.error?.issues?.length, kind).toBeGreaterThan(0);
      if (replayCheck.length < 5) replayCheck.push({ args: text, first: reply, key: req.idempotency_key });
    });
    // Refused calls are recorded like any finished call: asked again, the same answer is replayed.
    for (const r of replayCheck) {
      const again = await callTool(bus, callRequest({ tool: PROVIDED, arguments: r.args, roles: ROLES, idempotency_key: r.key }));
      expect(again).toMatchObject({ status: 'error', error: r.first.error, replayed: true });
    }

    let stored = 0;
    await eachLimited(fromProvider, 4, async ({ kind, value }) => {
      const key = `k${++stored}`;
      results.set(key, value);
      const reply = await call(PROVIDED, JSON.stringify({ key }));
      expectToolError(reply, 'tool_failed', kind);
      expect(reply.error?.message, kind).toMatch(/limit|not JSON|exceeds the bus message limit/);
      results.delete(key);
    });

    await eachLimited(fromMcp, 4, async ({ shape, size }) => {
      const reply = await call(MCP_TOOL, JSON.stringify({ shape, size }));
      expectToolError(reply, 'tool_failed', `${shape} ${size}`);
      expect(reply.error?.message, `${shape} ${size}`).toMatch(/tool-result limit (maxDepth|maxArrayLength|maxKeys|maxStringLength|forbiddenKey|maxBytes) at /);
    });

    const raw = await natsHandles(bus).nc.request(
      bus.subjects.toolCall,
      Uint8Array.from([...new TextEncoder().encode('{"tool":"'), 0xff, ...new TextEncoder().encode('"}')]),
      { timeout: 10_000 },
    );
    expect(decodeJson(raw.data)).toMatchObject({ ok: true, value: { ok: false, error: { code: 'invalid_payload', retryable: false } } });

    // The same process is still there and ready, and never overflowed its stack.
    const exited = await Promise.race([toolbus.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 50))]);
    expect(exited).toBe(false);
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200);
    expect(toolbus.logs.join('\n')).not.toMatch(/RangeError|Maximum call stack|uncaught/i);

    results.set('normal', { answer: 42 });
    expect(await call(PROVIDED, '{"key":"normal"}')).toMatchObject({ status: 'ok', result: { answer: 42 } });
    expect(await call(MCP_TOOL, '{"shape":"ok","size":7}')).toMatchObject({ status: 'ok', result: { result: 'fine 7' } });
    const tried = args.length + fromProvider.length + fromMcp.length + 1;
    console.info(
      `toolbus fuzz: ${tried} hostile inputs (seed ${SEED}: ${args.length} argument texts, ${fromProvider.length} provider results, ${fromMcp.length} MCP results, 1 bad UTF-8 request) in ${Date.now() - started} ms`,
    );
  }, 180_000);
});
