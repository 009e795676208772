import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@hermes/testkit';
import { startStack, type Stack } from './stack.js';
import { ModelScript, callTools, offeredTools, toolMessages } from './model-script.js';
import { outcomeOf, runTask } from './tasks.js';
import { auditRecords } from './tool-fixtures.js';

// The reference MCP server from npm, run over stdio by the toolbus process.
const everythingBin = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

let stack: Stack;
let model: ModelScript;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hermes-mcp-e2e-'));
  const configFile = join(dir, 'mcp.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      servers: {
        everything: {
          transport: 'stdio',
          command: process.execPath,
          args: [everythingBin, 'stdio'],
          enabled_tools: ['echo', 'get-sum', 'gzip-file-as-resource'],
          // Declared for the server's own tool name, run by the toolbus before the call reaches the server.
          tools: {
            echo: {
              transforms: [
                { op: 'alias', field: '/message', aliases: ['text'] },
                { op: 'trim', field: '/message' },
                { op: 'case', field: '/message', to: 'lower' },
              ],
              rules: [{ name: 'no_passwords', message: 'never echo a password', condition: { not: { field: '/message', op: 'contains', value: 'password' } } }],
            },
          },
        },
      },
    }),
  );
  stack = await startStack({ serviceEnv: { toolbus: { MCP_CONFIG_FILE: configFile } } });
  model = new ModelScript(stack.llm);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('MCP tools through the whole system', () => {
  it("a task's model calls a tool of a real MCP server (stdio) and reads its result", async () => {
    const goal = 'add two numbers with the MCP server';
    model.on(goal, [callTools({ id: 'sum', name: 'everything_get-sum', arguments: { a: 19, b: 23 } })], { then: { content: 'The sum is 42.' } });

    // The server is connected by the toolbus in the background: wait until its tools are offered.
    let offered: string[] = [];
    let probes = 0;
    // Generous: the toolbus starts the server as a child process on a loaded 2-core machine.
    await eventually(
      async () => {
        const { events } = await runTask(stack.bus, { user_id: 'alice', goal: `list tools ${probes++}` });
        expect(outcomeOf(events).kind).toBe('completed');
        offered = offeredTools(stack.llm.requests.at(-1)!.body);
        return offered.includes('everything_get-sum');
      },
      60_000,
      () => `the MCP server's tools to be offered; offered ${offered.join(', ')}`,
    );
    // enabled_tools hides the rest of the server's tools; names are prefixed with the server.
    expect(offered.filter((t) => t.startsWith('everything_')).sort()).toEqual(['everything_echo', 'everything_get-sum', 'everything_gzip-file-as-resource']);

    const { events } = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: 'The sum is 42.' });
    const [reply] = toolMessages(model.requests(goal)[1]!.body);
    expect(reply!.tool_call_id).toBe('sum');
    expect(reply!.content.ok).toBe(true);
    expect(JSON.stringify(reply!.content.result)).toContain('42');
  });

  it("a tool result with isError reaches the task's model as a tool error it can react to", async () => {
    const goal = 'compress a file the MCP server cannot fetch';
    // A valid URL by the schema, a protocol the server refuses: it answers isError: true.
    model.on(
      goal,
      [callTools({ id: 'gz', name: 'everything_gzip-file-as-resource', arguments: { name: 'x.gz', data: 'ftp://example.com/x', outputType: 'resourceLink' } })],
      {
        then: { content: 'The server cannot fetch ftp URLs.' },
      },
    );
    const { events } = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: 'The server cannot fetch ftp URLs.' });
    const [reply] = toolMessages(model.requests(goal)[1]!.body);
    expect(reply!.tool_call_id).toBe('gz');
    expect(reply!.content).toMatchObject({
      ok: false,
      error: { code: 'tool_failed', retryable: false, message: expect.stringContaining('Unsupported URL protocol') },
    });
  });

  it("an MCP tool's configured rule refuses a breaking call with a correction naming it, and its transforms reach the server; both audited", async () => {
    const goal = 'echo through the MCP server with rules';
    model.on(goal, [
      // Transformed first (alias, trim, lower case), then the rule sees "my password is hunter2".
      callTools({ id: 'e1', name: 'everything_echo', arguments: { text: '  My PASSWORD is hunter2 ' } }),
      callTools({ id: 'e2', name: 'everything_echo', arguments: { text: '  Hello MCP World  ' } }),
      { content: 'Echoed.' },
    ]);
    const { taskId, events } = await runTask(stack.bus, { user_id: 'alice', goal });
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: 'Echoed.' });

    const [refused] = toolMessages(model.requests(goal)[1]!.body);
    expect(refused!.tool_call_id).toBe('e1');
    expect(refused!.content).toMatchObject({ ok: false, error: { code: 'invalid_arguments', retryable: false } });
    expect(refused!.content.error!.issues).toEqual([
      expect.objectContaining({ path: '/message', rule: 'no_passwords', message: expect.stringContaining('never echo a password') }),
    ]);

    const ran = toolMessages(model.requests(goal)[2]!.body).find((m) => m.tool_call_id === 'e2');
    expect(ran!.content.ok).toBe(true);
    // The server echoes what it received: the transformed message, not what the model sent.
    expect(JSON.stringify(ran!.content.result)).toContain('Echo: hello mcp world');
    expect(JSON.stringify(ran!.content.result)).not.toContain('Hello MCP World');
    expect(ran!.content.adjusted_arguments!.map((a) => [a.path, a.transform, a.to])).toEqual([
      ['/message', 'alias', '/message'],
      ['/message', 'trim', '"Hello MCP World"'],
      ['/message', 'case', '"hello mcp world"'],
    ]);

    const audit = await auditRecords(stack.bus, taskId, 2);
    expect(audit.map((a) => [a.tool, a.outcome, a.error_code, a.broken_rules])).toEqual([
      ['everything_echo', 'error', 'invalid_arguments', ['no_passwords']],
      ['everything_echo', 'ok', undefined, undefined],
    ]);
    expect(audit[1]!.adjustments).toEqual(ran!.content.adjusted_arguments);
  });
});
