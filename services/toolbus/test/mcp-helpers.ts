import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contracts, type McpStatusReply } from '@hermes/contracts';
import { Bus, request } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import { cleanupAll, eventually, freePort, startChildService, startNatsServer, type ChildService } from '@hermes/testkit';
import type { Toolbus } from '../src/toolbus.js';
import type { ToolbusSettings } from '../src/toolbus-settings.js';
import { connect, freshPrefix, startTestToolbus } from './helpers.js';

const modules = new URL('../../../node_modules/@modelcontextprotocol/', import.meta.url);
/** The reference servers' entry points, run with `process.execPath` (no npx, no network). */
export const everythingBin = fileURLToPath(new URL('server-everything/dist/index.js', modules));
export const memoryBin = fileURLToPath(new URL('server-memory/dist/index.js', modules));

// The built toolbus, as it is deployed: killed with SIGKILL, it gets no chance to close anything.
const toolbusMain = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** A built toolbus as a process of its own (`npm run build` first), with the MCP servers of `configFile`, without task checks. */
export async function startToolbusProcess(o: { natsUrl: string; prefix: string; configFile: string; env?: Record<string, string> }): Promise<ChildService> {
  const healthPort = await freePort();
  return startChildService({
    name: 'toolbus',
    entry: toolbusMain,
    env: {
      NATS_URL: o.natsUrl,
      HERMES_SUBJECT_PREFIX: o.prefix,
      HEALTH_PORT: String(healthPort),
      MCP_CONFIG_FILE: o.configFile,
      TOOL_TASK_CHECK: 'false',
      LOG_LEVEL: 'warn',
      ...o.env,
    },
    healthPort,
  });
}

/** The tool names a caller with these roles is offered. */
export async function toolNames(bus: Bus, roles: string[] = ['admin']): Promise<string[]> {
  return (await request(bus, contracts.toolsList, { roles })).tools.map((t) => t.name);
}

export function mcpStatus(bus: Bus): Promise<McpStatusReply> {
  return request(bus, contracts.mcpStatus, {});
}

/** One server's row of `hermes mcp status`. */
export async function serverStatus(bus: Bus, name: string): Promise<McpStatusReply['servers'][number] | undefined> {
  return (await mcpStatus(bus)).servers.find((s) => s.name === name);
}

/** The test kit's `eventually` with what it waits for first and a longer default (MCP servers start as processes). */
export const waitFor = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> => eventually(probe, timeoutMs, what);

/** A toolbus with an MCP config file in a temporary folder, on a nats-server of its own. */
export interface McpTestRig {
  bus: Bus;
  toolbus: Toolbus;
  dir: string;
  configFile: string;
  /** Rewrites the config file in place (JSON, which the YAML reader takes too). */
  writeConfig(servers: Record<string, unknown>): void;
  stop(): Promise<void>;
}

export const configText = (servers: Record<string, unknown>): string => JSON.stringify({ servers }, null, 2);

/** `logger`: where the toolbus logs (silent unless given). */
export async function startMcpRig(o: {
  servers: Record<string, unknown>;
  settings?: Partial<ToolbusSettings>;
  fileName?: string;
  logger?: Logger;
}): Promise<McpTestRig> {
  const natsUrl = (await startNatsServer()).url;
  const dir = mkdtempSync(join(tmpdir(), 'hermes-mcp-'));
  const configFile = join(dir, o.fileName ?? 'mcp.yaml');
  const writeConfig = (servers: Record<string, unknown>): void => writeFileSync(configFile, configText(servers));
  writeConfig(o.servers);
  const bus = o.logger
    ? await Bus.connect({ servers: natsUrl, name: 'toolbus-test', logger: o.logger, prefix: freshPrefix(), waitOnFirstConnect: false })
    : await connect(natsUrl, freshPrefix());
  const toolbus = await startTestToolbus(bus, { MCP_CONFIG_FILE: configFile, ...o.settings });
  return {
    bus,
    toolbus,
    dir,
    configFile,
    writeConfig,
    async stop() {
      await toolbus.stop(2000);
      await bus.drain();
      await cleanupAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
