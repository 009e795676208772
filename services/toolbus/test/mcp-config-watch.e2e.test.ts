import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@hermes/bus';
import { sleep } from './helpers.js';
import { configText, everythingBin, mcpStatus, serverStatus, startMcpRig, toolNames, waitFor, type McpTestRig } from './mcp-helpers.js';
import { startTestMcpHttpServer, type TestMcpHttpServer } from './mcp-test-server.js';

// MCP_CONFIG_WATCH: editing the config file changes the servers of a running toolbus, with no
// `hermes mcp reload`. Nothing in this file asks for a reload.

let rig: McpTestRig;
let web: TestMcpHttpServer;
let bus: Bus;
let configFile: string;

const everything = { transport: 'stdio', command: process.execPath, args: [everythingBin, 'stdio'], enabled_tools: ['echo'] };
const webServer = () => ({ transport: 'http', url: web.url });
const text = configText;

/** Like an editor that saves to a new file and renames it over the old one. */
function replaceFile(content: string): void {
  const temporary = join(rig.dir, '.mcp.yaml.swp');
  writeFileSync(temporary, content);
  renameSync(temporary, configFile);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  web = await startTestMcpHttpServer();
  rig = await startMcpRig({ servers: { web: webServer() }, settings: { MCP_CONFIG_WATCH: true } });
  ({ bus, configFile } = rig);
  await waitFor('web_add', async () => (await toolNames(bus)).includes('web_add'));
}, 30_000);

afterAll(async () => {
  await rig?.stop();
  await web?.close();
});

describe('watching the MCP config file', () => {
  it('starts a server added to the file, keeping the running one connected', async () => {
    const webBefore = (await serverStatus(bus, 'web'))!;
    writeFileSync(configFile, text({ web: webServer(), everything }));
    await waitFor('everything_echo', async () => (await toolNames(bus)).includes('everything_echo'), 20_000);
    expect((await mcpStatus(bus)).servers.map((s) => s.name)).toEqual(['web', 'everything']);
    // Unchanged: the same connection, not a restart.
    expect((await serverStatus(bus, 'web'))?.ready_since).toBe(webBefore.ready_since);
  });

  it('restarts a server whose entry changed, with its new settings, and leaves the others alone', async () => {
    const [webBefore, everythingBefore] = [(await serverStatus(bus, 'web'))!, (await serverStatus(bus, 'everything'))!];
    expect(webBefore.tools).toEqual(expect.arrayContaining(['web_add', 'web_fail']));
    writeFileSync(configFile, text({ web: { ...webServer(), enabled_tools: ['add'] }, everything }));
    const webAfter = await waitFor('web restarted', async () => {
      const s = await serverStatus(bus, 'web');
      return s?.state === 'ready' && s.ready_since !== webBefore.ready_since ? s : undefined;
    });
    expect(webAfter.tools).toEqual(['web_add']);
    expect(await serverStatus(bus, 'everything')).toMatchObject({ pid: everythingBefore.pid, ready_since: everythingBefore.ready_since });
  });

  it('stops a server removed from a file replaced by rename, as editors save, and keeps watching the new file', async () => {
    replaceFile(text({ everything }));
    await waitFor('web removed', async () => !(await toolNames(bus)).includes('web_add'));
    expect((await mcpStatus(bus)).servers.map((s) => s.name)).toEqual(['everything']);
    expect(await toolNames(bus)).toContain('everything_echo');
    // A watch on the old file would follow the replaced inode and miss this edit.
    writeFileSync(configFile, text({ everything, web: webServer() }));
    await waitFor('web back', async () => (await toolNames(bus)).includes('web_add'));
  });

  it('ends the child process of a removed stdio server', async () => {
    const { pid } = (await serverStatus(bus, 'everything'))!;
    expect(pid).toEqual(expect.any(Number));
    writeFileSync(configFile, text({ web: webServer() }));
    await waitFor('everything removed', async () => (await mcpStatus(bus)).servers.every((s) => s.name !== 'everything'));
    await waitFor('child ended', async () => !isRunning(pid!), 5000);
    const names = await toolNames(bus);
    expect(names.some((n) => n.startsWith('everything_'))).toBe(false);
    expect(names).toContain('web_add');
  });

  it('keeps the running servers when the file becomes unparseable, and does not reload a file saved unchanged', async () => {
    const good = text({ web: webServer() });
    writeFileSync(configFile, 'servers: [this is not yaml');
    const broken = await waitFor('problem reported', async () => {
      const s = await mcpStatus(bus);
      return s.problems.length ? s : undefined;
    });
    expect(broken.problems[0]?.message).toContain('is not valid YAML');
    expect(broken.servers.map((s) => s.name)).toEqual(['web']);
    expect(await toolNames(bus)).toContain('web_add');

    writeFileSync(configFile, good);
    const loaded = await waitFor('fixed', async () => {
      const s = await mcpStatus(bus);
      return s.problems.length === 0 ? s.loaded_at : undefined;
    });
    // Saved again with the same text: no reload (loaded_at stays).
    writeFileSync(configFile, good);
    await sleep(1000);
    expect((await mcpStatus(bus)).loaded_at).toBe(loaded);
  });
});
