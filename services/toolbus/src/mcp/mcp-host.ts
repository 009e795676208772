import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { ToolSpec } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import type { ArgumentValidator } from '../argument-validator.js';
import type { ExecOutcome, ToolArguments } from '../tool-types.js';
import { resultOverLimits } from '../payload-limits.js';
import type { SourcedTool, ToolSource } from '../tool-registry.js';
import { loadMcpConfig, parseMcpConfig, sameServerConfig, type McpConfigProblem, type McpServerConfig } from './mcp-config.js';
import { redactText } from './mcp-secrets.js';
import { McpNotFoundError, McpRequestTimeoutError, McpServerUnavailableError } from './mcp-errors.js';
import { disambiguatedName, mcpToolName } from './mcp-naming.js';
import { killRecordedOrphans } from './mcp-orphans.js';
import { outcomeOfMcpResult, type McpCallResult } from './mcp-results.js';
import { mcpToolMemory, McpServerConnection, type McpServerStatus, type McpToolMemory } from './mcp-server.js';

export interface McpHostOptions {
  /** The config file (JSON, or YAML); absent = no MCP servers. */
  configFile?: string;
  /** Instead of a file (tests, embedding): the parsed config document. */
  config?: unknown;
  /** Re-read the file when it changes (saved in place, replaced by rename, or a Kubernetes ConfigMap update). */
  watch?: boolean;
  validator: ArgumentValidator;
  logger: Logger;
  healthIntervalMs?: number;
  descriptionMaxChars?: number;
  backoff?: { initialMs: number; maxMs: number };
  env?: NodeJS.ProcessEnv;
  /** MCP_PID_FILE: stdio servers are recorded here, and those a previous toolbus left are killed at start. */
  pidFile?: string;
}

/** What a reload did. */
export interface McpReloadReport {
  added: string[];
  removed: string[];
  restarted: string[];
  unchanged: string[];
  problems: McpConfigProblem[];
}

export interface McpHostStatus {
  config_file?: string;
  loaded_at?: string;
  problems: McpConfigProblem[];
  servers: McpServerStatus[];
  /** Tools a ready server lists but the toolbus cannot offer (a schema it cannot compile). */
  skipped_tools: { server: string; tool: string; reason: string }[];
}

/** Where a tool the host offers goes: the server and the server's own name for it. */
export interface McpRoute {
  server: string;
  tool: string;
}

/** How long the config file must stay quiet after a change before it is re-read (editors write in several steps). */
const WATCH_DEBOUNCE_MS = 300;

/** The provider name of a server's tools in the registry and the audit. */
export const mcpProvider = (server: string): string => `mcp:${server}`;

/**
 * The MCP servers of the config file, each supervised by a McpServerConnection, as a tool source
 * for the registry: `<server>_<tool>` names (a clash between servers gets a hash suffix), the
 * config's roles, require_confirm and timeouts, descriptions capped and marked with the server
 * and original name. Reloads start added servers, stop removed ones and restart changed ones;
 * what the rug-pull defence remembers of a server survives its restarts and reloads.
 */
export class McpHost implements ToolSource {
  private readonly servers = new Map<string, McpServerConnection>();
  private readonly memory = new Map<string, McpToolMemory>();
  private problems: McpConfigProblem[] = [];
  private loadedAt: string | undefined;
  private watcher: FSWatcher | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  /** The file's text when the watcher last looked: events that leave it unchanged reload nothing. */
  private watchedText: string | undefined;
  private stopped = false;
  private offered: SourcedTool[] = [];
  private routes = new Map<string, McpRoute>();
  private skipped: McpHostStatus['skipped_tools'] = [];
  private dirty = true;
  /** Offered name → server, for every tool a server offered when it was last ready. */
  private lastOffered = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private reloading: Promise<McpReloadReport> = Promise.resolve(nothingReloaded());

  constructor(private readonly o: McpHostOptions) {}

  /** Reads the config and starts every server in the background (their tools appear as each becomes ready). */
  async start(): Promise<McpReloadReport> {
    // Before any server of ours starts, so only what a previous toolbus left is in the file.
    if (this.o.pidFile) killRecordedOrphans(this.o.pidFile, this.o.logger);
    if (this.o.watch && this.o.configFile) this.watchedText = await readText(this.o.configFile);
    const report = await this.reload();
    if (this.o.watch && this.o.configFile) this.watchFile(this.o.configFile);
    return report;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    clearTimeout(this.watchTimer);
    await this.reloading.catch(() => undefined);
    await Promise.all([...this.servers.values()].map((s) => s.stop()));
    this.servers.clear();
    this.changed();
  }

  /** Calls `fn` whenever the tools on offer may have changed. */
  onToolsChanged(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Re-reads the config: added servers start, removed ones stop, changed ones restart; a config that cannot be read changes nothing. */
  reload(): Promise<McpReloadReport> {
    this.reloading = this.reloading.catch(() => undefined).then(() => this.applyConfig());
    return this.reloading;
  }

  private async applyConfig(): Promise<McpReloadReport> {
    // A reload that was queued (a file event, another replica's request) must not start servers after stop().
    if (this.stopped) return nothingReloaded();
    const config = this.o.configFile ? await loadMcpConfig(this.o.configFile, this.o.env) : parseMcpConfig(this.o.config, this.o.env);
    for (const p of config.problems) this.o.logger.error({ mcp_server: p.server, field: p.field }, p.message);
    this.problems = config.problems;
    const report: McpReloadReport = { added: [], removed: [], restarted: [], unchanged: [], problems: config.problems };
    if (config.fatal) return report;
    this.loadedAt = new Date().toISOString();
    const wanted = new Map(config.servers.map((s) => [s.name, s]));
    // A server whose entry became invalid keeps running as it was: one bad edit should not take it away.
    const invalid = new Set(config.problems.map((p) => p.server).filter((s): s is string => s !== undefined));
    const stops: Promise<void>[] = [];
    for (const [name, running] of this.servers) {
      if (wanted.has(name) || invalid.has(name)) continue;
      stops.push(running.stop());
      this.servers.delete(name);
      this.memory.delete(name);
      report.removed.push(name);
    }
    for (const server of config.servers) {
      const running = this.servers.get(server.name);
      if (running && sameServerConfig(running.config, server)) {
        report.unchanged.push(server.name);
        continue;
      }
      if (running) {
        stops.push(running.stop());
        report.restarted.push(server.name);
      } else {
        report.added.push(server.name);
      }
      this.servers.set(server.name, this.connectionFor(server));
    }
    // Keep the config's order (it decides which server keeps a clashing name).
    const order = [...wanted.keys(), ...[...this.servers.keys()].filter((n) => !wanted.has(n))];
    const sorted = order.flatMap((n) => (this.servers.has(n) ? [[n, this.servers.get(n)!] as const] : []));
    this.servers.clear();
    for (const [n, s] of sorted) this.servers.set(n, s);
    // A removed server's tools go now, not once its process has ended.
    this.changed();
    await Promise.all(stops);
    for (const name of [...report.added, ...report.restarted]) this.servers.get(name)?.start();
    this.o.logger.info({ added: report.added, removed: report.removed, restarted: report.restarted, problems: report.problems.length }, 'MCP config loaded');
    this.changed();
    return report;
  }

  private connectionFor(config: McpServerConfig): McpServerConnection {
    let memory = this.memory.get(config.name);
    if (!memory) this.memory.set(config.name, (memory = mcpToolMemory()));
    return new McpServerConnection({
      config,
      memory,
      logger: this.o.logger,
      healthIntervalMs: this.o.healthIntervalMs ?? 30_000,
      backoff: this.o.backoff ?? { initialMs: 250, maxMs: 30_000 },
      pidFile: this.o.pidFile,
      onToolsChanged: () => this.changed(),
    });
  }

  private changed(): void {
    this.dirty = true;
    for (const fn of this.listeners) fn();
  }

  /** The tools of every ready server, as the registry offers them. */
  tools(): readonly SourcedTool[] {
    if (this.dirty) this.rebuild();
    return this.offered;
  }

  /**
   * Why a tool this host offered while its server was ready is not offered now, when the server is
   * still configured but not ready (reconnecting, starting): the call may work again shortly.
   * Undefined for names it never offered, or whose server is ready and dropped them itself.
   */
  unavailable(name: string): string | undefined {
    if (this.dirty) this.rebuild();
    const serverName = this.lastOffered.get(name);
    const state = serverName === undefined ? undefined : this.servers.get(serverName)?.status().state;
    if (state === undefined || state === 'ready') return undefined;
    return `its MCP server "${serverName}" is ${state}`;
  }

  /**
   * Whether a name is an MCP server's: one it offered, or one under a configured server's prefix
   * (`<server>_`), even while that server is starting or away, so that no remote provider can
   * squat it and receive the arguments meant for the server.
   */
  owns(name: string): boolean {
    if (this.dirty) this.rebuild();
    if (this.lastOffered.has(name)) return true;
    for (const server of this.servers.keys()) if (name.startsWith(mcpToolName(server, ''))) return true;
    return false;
  }

  /** Whether a server of this name is configured. */
  has(server: string): boolean {
    return this.servers.has(server);
  }

  /** Where an offered tool name goes (only while its server is ready). */
  route(name: string): McpRoute | undefined {
    if (this.dirty) this.rebuild();
    return this.routes.get(name);
  }

  private rebuild(): void {
    this.dirty = false;
    const offered: SourcedTool[] = [];
    const routes = new Map<string, McpRoute>();
    const skipped: McpHostStatus['skipped_tools'] = [];
    const max = this.o.descriptionMaxChars ?? 1024;
    for (const server of this.servers.values()) {
      const c = server.config;
      for (const t of server.tools()) {
        let name = mcpToolName(c.name, t.name);
        if (routes.has(name)) {
          name = disambiguatedName(c.name, t.name);
          this.o.logger.warn({ mcp_server: c.name, tool: t.name, offered_as: name }, 'MCP tool name clashes with another server’s; offered with a hash suffix');
        }
        const toolPolicy = c.tools?.[t.name] ?? {};
        const policy = { ...pick(c), ...pick(toolPolicy) };
        const parameters = toolParameters(t.inputSchema);
        try {
          this.o.validator.prepare(parameters);
        } catch (err) {
          skipped.push({ server: c.name, tool: t.name, reason: `input schema rejected: ${(err as Error).message}` });
          continue;
        }
        const spec: ToolSpec = {
          name,
          description: describeTool(c.name, t.name, t.description, max),
          parameters,
          ...(policy.timeout_ms !== undefined ? { timeout_ms: policy.timeout_ms } : {}),
          ...(policy.require_confirm !== undefined ? { require_confirm: policy.require_confirm } : {}),
          ...(policy.roles !== undefined ? { roles: policy.roles } : {}),
          ...(toolPolicy.transforms ? { transforms: toolPolicy.transforms } : {}),
          ...(toolPolicy.rules ? { rules: toolPolicy.rules } : {}),
        };
        routes.set(name, { server: c.name, tool: t.name });
        offered.push({ spec, provider: mcpProvider(c.name), host: { kind: 'mcp', server: c.name, tool: t.name } });
      }
    }
    for (const s of skipped) if (!this.skipped.some((k) => k.server === s.server && k.tool === s.tool)) this.o.logger.warn(s, 'MCP tool skipped');
    this.offered = offered;
    this.routes = routes;
    this.skipped = skipped;
    // A server that is not ready keeps its names here; a ready one's are what it offers now.
    const lastOffered = new Map<string, string>();
    for (const [name, server] of this.lastOffered) if (this.servers.get(server)?.status().state !== 'ready') lastOffered.set(name, server);
    for (const [name, route] of routes) lastOffered.set(name, route.server);
    this.lastOffered = lastOffered;
  }

  /** Runs a validated call on its server (the executor's path); every failure is a ToolError. */
  async call(route: McpRoute, args: ToolArguments, opts: { signal?: AbortSignal; timeoutMs: number; idempotencyKey?: string }): Promise<ExecOutcome> {
    const server = this.servers.get(route.server);
    if (!server)
      return { ok: false, error: { code: 'provider_unavailable', message: `MCP server "${route.server}" is not configured any more`, retryable: true } };
    try {
      const result = await server.callTool(route.tool, args, opts);
      // Before the result is read (an error's structuredContent is stringified): the executor checks it again as a value, cheaply.
      const overLimits = resultOverLimits(route.tool, result);
      const outcome = overLimits ? { ok: false as const, error: overLimits } : outcomeOfMcpResult(route.tool, result);
      // A server's error text goes to the model, the audit and the events: never with a configured secret in it.
      return outcome.ok ? outcome : { ok: false, error: { ...outcome.error, message: redactText(outcome.error.message, server.config.secrets) } };
    } catch (err) {
      if (err instanceof McpServerUnavailableError) return { ok: false, error: { code: 'provider_unavailable', message: err.message, retryable: true } };
      if (opts.signal?.aborted || err instanceof McpRequestTimeoutError)
        return { ok: false, error: { code: 'tool_timeout', message: `MCP tool "${route.tool}" did not answer within ${opts.timeoutMs} ms`, retryable: true } };
      return {
        ok: false,
        error: {
          code: 'tool_failed',
          message: `MCP server "${route.server}" refused the call of "${route.tool}": ${(err as Error).message ?? String(err)}`,
          retryable: false,
        },
      };
    }
  }

  /** Straight to the server, bypassing the toolbus's checks (debugging): the raw MCP result. */
  async callDirect(serverName: string, tool: string, args: Record<string, unknown>, timeoutMs = 30_000): Promise<McpCallResult> {
    return this.server(serverName).callTool(tool, args, { timeoutMs });
  }

  /** Lists a server's resources, resource templates and prompts. */
  resources(serverName: string): ReturnType<McpServerConnection['listResources']> {
    return this.server(serverName).listResources();
  }

  readResource(serverName: string, uri: string): Promise<unknown> {
    return this.server(serverName).readResource(uri);
  }

  getPrompt(serverName: string, name: string, args: Record<string, string> = {}): Promise<unknown> {
    return this.server(serverName).getPrompt(name, args);
  }

  /** Accepts changed tools of a server (one, or all); they are offered again. */
  approveChanges(serverName: string, tool?: string): string[] {
    return this.server(serverName).approveChanges(tool);
  }

  status(): McpHostStatus {
    if (this.dirty) this.rebuild();
    return {
      ...(this.o.configFile ? { config_file: this.o.configFile } : {}),
      ...(this.loadedAt ? { loaded_at: this.loadedAt } : {}),
      problems: this.problems,
      servers: [...this.servers.values()].map((s) => {
        const status = s.status();
        // The names the model sees, not the server's own.
        return { ...status, tools: this.offered.filter((t) => t.host.kind === 'mcp' && t.host.server === s.name).map((t) => t.spec.name) };
      }),
      skipped_tools: this.skipped,
    };
  }

  private server(name: string): McpServerConnection {
    const server = this.servers.get(name);
    if (!server) throw new McpNotFoundError(`there is no MCP server "${name}"; configured: ${[...this.servers.keys()].join(', ') || 'none'}`);
    return server;
  }

  /**
   * Watches the file's directory rather than the file: editors that save by writing a new file and
   * renaming it over the old one, and Kubernetes ConfigMap updates (a symlink swap), leave a watch
   * on the file itself following the old inode. Events are debounced and a reload happens only when
   * the text changed. A watch-triggered reload is this replica's own: every replica watches its file.
   */
  private watchFile(path: string): void {
    const name = basename(path);
    try {
      this.watcher = watch(dirname(path), (_event, filename) => {
        // ConfigMap updates touch `..data` and `..<timestamp>` entries, not the file's own name.
        if (filename !== null && filename !== name && !filename.startsWith('..')) return;
        clearTimeout(this.watchTimer);
        this.watchTimer = setTimeout(() => void this.reloadIfChanged(path), WATCH_DEBOUNCE_MS);
        this.watchTimer.unref();
      });
      this.watcher.on('error', (err) => this.o.logger.warn({ err: err.message, path }, 'stopped watching the MCP config file; use hermes mcp reload'));
      this.watcher.unref();
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message, path }, 'cannot watch the MCP config file; use hermes mcp reload');
    }
  }

  private async reloadIfChanged(path: string): Promise<void> {
    const text = await readText(path);
    // Unreadable (mid-replace, deleted): wait for the next event; the running servers stay.
    if (text === undefined || text === this.watchedText) return;
    this.watchedText = text;
    this.o.logger.info({ path }, 'MCP config file changed; reloading');
    await this.reload();
  }
}

function nothingReloaded(): McpReloadReport {
  return { added: [], removed: [], restarted: [], unchanged: [], problems: [] };
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

function pick(p: { require_confirm?: boolean; roles?: string[]; timeout_ms?: number }): { require_confirm?: boolean; roles?: string[]; timeout_ms?: number } {
  return {
    ...(p.require_confirm !== undefined ? { require_confirm: p.require_confirm } : {}),
    ...(p.roles !== undefined ? { roles: p.roles } : {}),
    ...(p.timeout_ms !== undefined ? { timeout_ms: p.timeout_ms } : {}),
  };
}

/** An MCP input schema as tool parameters: an object schema without `$schema` (ajv compiles one draft). */
function toolParameters(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _draft, ...rest } = schema;
  return { ...rest, type: 'object' };
}

/** The server's description is untrusted: capped, and marked with where it comes from. */
function describeTool(server: string, tool: string, description: string, max: number): string {
  const text = description.length > max ? `${description.slice(0, max)}…` : description;
  return `${text} (MCP server "${server}", tool "${tool}")`.slice(0, 2048);
}
