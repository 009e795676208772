import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { callRequest, callTool, connect, freshPrefix, natsForFile, startTestToolbus } from './helpers.js';
import { configText, serverStatus, startToolbusProcess, waitFor } from './mcp-helpers.js';

/** The key a call's idempotency key travels under in the MCP request's _meta (docs/mcp.md). */
const KEY = 'io.hermes/idempotency_key';
const recorder = fileURLToPath(new URL('./fixtures/meta-recording-mcp-server.mjs', import.meta.url));
const nats = natsForFile();
const cleanups = nats.cleanups;

interface Received {
  note: string;
  meta: Record<string, unknown> | null;
  pid: number;
}

/** A config with the recording server as `notes`, and what that server received so far. */
function recordingServer(): { configFile: string; received: () => Received[] } {
  const dir = mkdtempSync(join(tmpdir(), 'hermes-mcp-meta-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const recordFile = join(dir, 'received.jsonl');
  const configFile = join(dir, 'mcp.json');
  writeFileSync(configFile, configText({ notes: { transport: 'stdio', command: process.execPath, args: [recorder], env: { RECORD_FILE: recordFile } } }));
  const received = () =>
    existsSync(recordFile)
      ? readFileSync(recordFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Received)
      : [];
  return { configFile, received };
}

// A status request can land on the replica just killed (nats-server has not yet dropped its
// subscription) and time out: that is "not ready yet", not a failure.
const ready = (bus: Parameters<typeof serverStatus>[0]) =>
  waitFor('the MCP server ready', async () => (await serverStatus(bus, 'notes').catch(() => undefined))?.state === 'ready');

describe('the idempotency key reaches MCP servers in _meta', () => {
  it("every call carries its own idempotency key, and only it, in the request's _meta; a repeated call is replayed without asking the server", async () => {
    const { configFile, received } = recordingServer();
    const bus = await connect(nats.url, freshPrefix());
    const toolbus = await startTestToolbus(bus, { MCP_CONFIG_FILE: configFile });
    cleanups.push(async () => (await toolbus.stop(2000), await bus.drain()));
    await ready(bus);

    const first = callRequest({ tool: 'notes_note', arguments: JSON.stringify({ note: 'first' }), roles: ['admin'] });
    const second = callRequest({ tool: 'notes_note', arguments: JSON.stringify({ note: 'second' }), roles: ['admin'] });
    expect(await callTool(bus, first)).toMatchObject({ status: 'ok' });
    expect(await callTool(bus, second)).toMatchObject({ status: 'ok' });
    expect(received().map((r) => [r.note, r.meta])).toEqual([
      ['first', { [KEY]: first.idempotency_key }],
      ['second', { [KEY]: second.idempotency_key }],
    ]);

    // The same call again (a runtime resending after a lost reply): the toolbus's record answers it.
    expect(await callTool(bus, first)).toMatchObject({ status: 'ok', replayed: true });
    expect(received()).toHaveLength(2);
  });

  it('a call taken over from a toolbus killed mid-call reaches the next MCP server with the same key, so a server honouring it can tell the two runs apart', async () => {
    const { configFile, received } = recordingServer();
    const prefix = freshPrefix();
    // A 1 s lease (the least allowed): the takeover comes 1 s after the kill, not the default 10 s.
    const dying = await startToolbusProcess({ natsUrl: nats.url, prefix, configFile, env: { TOOL_CALL_LEASE_MS: '1000' } });
    cleanups.push(() => dying.kill());
    const bus = await connect(nats.url, prefix);
    cleanups.push(() => bus.drain());
    await ready(bus);

    const call = callRequest({ tool: 'notes_note', arguments: JSON.stringify({ note: 'pay rent', delay_ms: 3000 }), roles: ['admin'] });
    void callTool(bus, call).catch(() => undefined);
    await waitFor("the call in the first server's hands", async () => received().length === 1);
    // The second replica starts only now, so the first call cannot have gone to it.
    const next = await startTestToolbus(bus, { MCP_CONFIG_FILE: configFile });
    cleanups.push(() => next.stop(2000));
    await dying.kill();
    await ready(bus);

    // The runtime asks again with the same request; the record's lease lapses and this replica runs it.
    // Generous: the lease, the server's 3 s call and a loaded machine.
    expect(await callTool(bus, call, 30_000)).toMatchObject({ status: 'ok' });
    const runs = received();
    expect(runs.map((r) => [r.note, r.meta])).toEqual([
      ['pay rent', { [KEY]: call.idempotency_key }],
      ['pay rent', { [KEY]: call.idempotency_key }],
    ]);
    expect(runs[0]!.pid).not.toBe(runs[1]!.pid);
  });
});
