import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@hermes/telemetry';
import { redactedConfig, type McpServerConfig } from './mcp-config.js';
import { fromMcpError, McpServerUnavailableError } from './mcp-errors.js';
import { redactError, redactText } from './mcp-secrets.js';
import type { McpCallResult } from './mcp-results.js';
import { STDIO_GUARD } from './mcp-orphans.js';
import { ChangeWatch, type ToolChange } from '../change-watch.js';

/** Where a server is in its life: its tools are offered only while it is `ready`. */
export type McpServerState = 'connecting' | 'ready' | 'reconnecting' | 'stopped';

/** A tool as the server lists it (after the server's enabled/disabled filters). */
export interface McpListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** sha256 of description and schema: what the rug-pull defence compares. */
  fingerprint: string;
}

/** What the toolbus remembers of a server's tools across restarts and reloads (per replica): their fingerprints. */
export type McpToolMemory = ChangeWatch<string>;

/** A new MCP server's memory: any other fingerprint is a change. */
export const mcpToolMemory = (): McpToolMemory => new ChangeWatch<string>({ differs: (a, b) => a !== b });

export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  health: 'ok' | 'failing' | 'unknown';
  http_mode?: 'streamable' | 'sse';
  pid?: number;
  tools: string[];
  changed_tools: ToolChange[];
  restarts: number;
  last_error?: string;
  ready_since?: string;
  last_health_at?: string;
  server_info?: { name: string; version: string };
  config: Record<string, unknown>;
}

export interface McpServerConnectionOptions {
  config: McpServerConfig;
  logger: Logger;
  memory: McpToolMemory;
  healthIntervalMs: number;
  backoff: { initialMs: number; maxMs: number };
  /** Where each stdio server's guard records the server's pid (MCP_PID_FILE); absent = not recorded. */
  pidFile?: string | undefined;
  /** Called whenever the set of tools on offer may have changed (ready, lost, list_changed). */
  onToolsChanged: () => void;
}

const CLIENT_INFO = { name: 'hermes-toolbus', version: '0.1.0' };
const STDERR_LINES = 20;

/**
 * One MCP server, supervised: connects (spawning a stdio child or opening Streamable HTTP, with
 * SSE as the fallback), lists its tools, and is `ready` only then. A lost connection (the child
 * exited, the health check failed) withdraws its tools and reconnects with exponential back-off;
 * calls in flight then fail with McpServerUnavailableError. `tools/list_changed` refreshes the list.
 */
export class McpServerConnection {
  private state: McpServerState = 'connecting';
  private client: Client | undefined;
  private transport: StdioClientTransport | StreamableHTTPClientTransport | SSEClientTransport | undefined;
  private listed: McpListedTool[] = [];
  private generation = 0;
  private attempts = 0;
  private restarts = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private healthFailures = 0;
  private health: McpServerStatus['health'] = 'unknown';
  private lastError: string | undefined;
  private readySince: string | undefined;
  private lastHealthAt: string | undefined;
  private httpMode: 'streamable' | 'sse' | undefined;
  private readonly stderrTail: string[] = [];
  /** The stdio server's own pid, as its guard reports it. */
  private serverPid: number | undefined;

  constructor(private readonly o: McpServerConnectionOptions) {}

  get name(): string {
    return this.o.config.name;
  }

  get config(): McpServerConfig {
    return this.o.config;
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  /** Starts connecting in the background; never throws. */
  start(): void {
    void this.connect();
    this.healthTimer = setInterval(() => void this.checkHealth(), this.o.healthIntervalMs);
    this.healthTimer.unref();
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    this.generation += 1;
    clearTimeout(this.retryTimer);
    clearInterval(this.healthTimer);
    await this.closeClient();
    this.listed = [];
  }

  /** The tools on offer: none unless ready; filtered by the config; changed tools held back when pinned. */
  tools(): McpListedTool[] {
    if (this.state !== 'ready') return [];
    return this.listed.filter((t) => !this.o.memory.isHeld(t.name));
  }

  /** Accepts the current description and schema of changed tools (all when `tool` is absent); returns the tools accepted. */
  approveChanges(tool?: string): string[] {
    const accepted = this.o.memory.approve(tool);
    if (accepted.length) this.o.onToolsChanged();
    return accepted;
  }

  status(): McpServerStatus {
    const pid = this.transport instanceof StdioClientTransport ? this.serverPid : undefined;
    const info = this.client?.getServerVersion();
    return {
      name: this.name,
      transport: this.o.config.transport,
      state: this.state,
      health: this.health,
      ...(this.httpMode ? { http_mode: this.httpMode } : {}),
      ...(pid !== undefined && this.state !== 'stopped' ? { pid } : {}),
      tools: this.tools().map((t) => t.name),
      changed_tools: this.o.memory.list(),
      restarts: this.restarts,
      ...(this.lastError ? { last_error: this.lastError } : {}),
      ...(this.readySince ? { ready_since: this.readySince } : {}),
      ...(this.lastHealthAt ? { last_health_at: this.lastHealthAt } : {}),
      ...(info ? { server_info: { name: info.name, version: info.version } } : {}),
      config: redactedConfig(this.o.config),
    };
  }

  /** Calls a tool by the server's own name. Throws McpServerUnavailableError when not connected or lost meanwhile. */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; timeoutMs: number; idempotencyKey?: string },
  ): Promise<McpCallResult> {
    const client = this.connected();
    try {
      const params = { name: tool, arguments: args, ...(opts.idempotencyKey ? { _meta: { 'io.hermes/idempotency_key': opts.idempotencyKey } } : {}) };
      return (await client.callTool(params, undefined, { timeout: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) })) as McpCallResult;
    } catch (err) {
      throw this.unavailableOr(err);
    }
  }

  async listResources(): Promise<{ resources: unknown[]; prompts: unknown[]; templates: unknown[] }> {
    const client = this.connected();
    const caps = client.getServerCapabilities() ?? {};
    try {
      const resources = caps.resources ? (await client.listResources()).resources : [];
      const templates = caps.resources ? (await client.listResourceTemplates()).resourceTemplates : [];
      const prompts = caps.prompts ? (await client.listPrompts()).prompts : [];
      return { resources, prompts, templates };
    } catch (err) {
      throw this.unavailableOr(err);
    }
  }

  async readResource(uri: string): Promise<unknown> {
    const client = this.connected();
    try {
      return await client.readResource({ uri });
    } catch (err) {
      throw this.unavailableOr(err);
    }
  }

  async getPrompt(name: string, args: Record<string, string>): Promise<unknown> {
    const client = this.connected();
    try {
      return await client.getPrompt({ name, arguments: args });
    } catch (err) {
      throw this.unavailableOr(err);
    }
  }

  private connected(): Client {
    if (this.state !== 'ready' || !this.client)
      throw new McpServerUnavailableError(this.name, this.state === 'stopped' ? 'it was removed or the toolbus is stopping' : `it is ${this.state}`);
    return this.client;
  }

  /** The error a caller sees: blamed on the connection where that is the cause, and never carrying a configured secret. */
  private unavailableOr(err: unknown): unknown {
    return redactError(fromMcpError(err, { server: this.name, state: this.state }), this.o.config.secrets);
  }

  /** Every text from the server or its transport passes here before it is logged or shown (a server may echo a header back). */
  private redact(text: string): string {
    return redactText(text, this.o.config.secrets);
  }

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.state = this.restarts > 0 || this.attempts > 0 ? 'reconnecting' : 'connecting';
    try {
      const client = await this.open(gen);
      if (gen !== this.generation) {
        await client.close().catch(() => undefined);
        return;
      }
      this.client = client;
      await this.refreshTools(gen);
      if (gen !== this.generation) return;
      this.state = 'ready';
      this.readySince = new Date().toISOString();
      this.healthFailures = 0;
      this.health = 'ok';
      this.lastError = undefined;
      this.o.logger.info({ mcp_server: this.name, tools: this.listed.map((t) => t.name), attempt: this.attempts + 1 }, 'MCP server ready');
      this.o.onToolsChanged();
    } catch (err) {
      if (gen !== this.generation) return;
      this.lastError = this.redact(describe(err, this.stderrTail));
      this.o.logger.warn({ mcp_server: this.name, err: this.lastError, attempt: this.attempts + 1 }, 'could not connect to MCP server');
      await this.closeClient();
      this.scheduleReconnect();
    }
  }

  private async open(gen: number): Promise<Client> {
    const c = this.o.config;
    const timeout = c.connect_timeout_ms ?? 30_000;
    if (c.transport === 'stdio') {
      // Under the guard, so that the server dies with this toolbus even when it is SIGKILLed.
      const guard = [STDIO_GUARD, ...(this.o.pidFile ? ['--pid-file', this.o.pidFile] : []), '--', c.command, ...c.args];
      this.serverPid = undefined;
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: guard,
        env: { ...getDefaultEnvironment(), ...c.env },
        ...(c.cwd ? { cwd: c.cwd } : {}),
        stderr: 'pipe',
      });
      this.followStderr(transport);
      return this.handshake(transport, gen, timeout);
    }
    const url = new URL(c.url);
    const requestInit = { headers: c.headers };
    let refused: { status: number; message: string } | undefined;
    if (this.httpMode !== 'sse') {
      try {
        const client = await this.handshake(
          new StreamableHTTPClientTransport(url, {
            requestInit,
            reconnectionOptions: { initialReconnectionDelay: 500, maxReconnectionDelay: 5000, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
          }),
          gen,
          timeout,
        );
        this.httpMode = 'streamable';
        return client;
      } catch (err) {
        // A server that only speaks the old SSE transport refuses the POST with a 4xx (the MCP spec's
        // backwards-compatibility rule). Once a server answered Streamable HTTP, a 4xx is its answer.
        const status = err instanceof StreamableHTTPError ? err.code : undefined;
        if (this.httpMode === 'streamable' || status === undefined || status < 400 || status >= 500) throw err;
        this.o.logger.info({ mcp_server: this.name, status }, 'Streamable HTTP refused; trying the SSE transport');
        refused = { status, message: (err as Error).message };
      }
    }
    try {
      const client = await this.handshake(new SSEClientTransport(url, { requestInit }), gen, timeout);
      this.httpMode = 'sse';
      return client;
    } catch (err) {
      if (refused === undefined) throw err;
      // Neither worked: say both, since the 4xx may be the real problem (a wrong path, a missing token).
      throw new Error(`Streamable HTTP refused with HTTP ${refused.status} (${refused.message}); the SSE transport failed too: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  private async handshake(transport: StdioClientTransport | StreamableHTTPClientTransport | SSEClientTransport, gen: number, timeout: number): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.onclose = () => {
      if (gen === this.generation && this.client === client) this.lost('the connection closed');
    };
    client.onerror = (err) => this.o.logger.debug({ mcp_server: this.name, err: this.redact(err.message) }, 'MCP transport error');
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (gen !== this.generation || this.state !== 'ready') return;
      await this.refreshTools(gen).catch((err: unknown) =>
        this.o.logger.warn({ mcp_server: this.name, err: this.redact((err as Error).message) }, 'could not refresh the tool list'),
      );
      this.o.onToolsChanged();
    });
    this.transport = transport;
    try {
      await client.connect(transport, { timeout });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    return client;
  }

  /** Lists the server's tools (every page) and applies the config's filters and the rug-pull check. */
  private async refreshTools(gen: number): Promise<void> {
    const client = this.client;
    if (!client) return;
    const all: McpListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.o.config.connect_timeout_ms ?? 30_000 });
      for (const t of page.tools) {
        const description = t.description ?? t.title ?? '';
        const inputSchema = t.inputSchema as Record<string, unknown>;
        all.push({ name: t.name, description, inputSchema, fingerprint: fingerprint(description, inputSchema) });
      }
      cursor = page.nextCursor;
    } while (cursor);
    if (gen !== this.generation) return;
    const { enabled_tools: allow, disabled_tools: deny } = this.o.config;
    this.listed = all.filter((t) => (!allow || allow.includes(t.name)) && !deny?.includes(t.name));
    for (const t of this.listed) this.checkFingerprint(t);
  }

  private checkFingerprint(t: McpListedTool): void {
    const { held, detected } = this.o.memory.see(t.name, t.fingerprint, this.o.config.pin_tools === true);
    if (!detected) return;
    this.o.logger.warn(
      { mcp_server: this.name, tool: t.name, held },
      held
        ? 'MCP tool changed its description or schema since first seen; hidden until approved (hermes mcp approve-change)'
        : 'MCP tool changed its description or schema since first seen',
    );
  }

  private lost(cause: string): void {
    if (this.state === 'stopped') return;
    const reason = this.redact(cause);
    const tail = this.stderrTail.length ? `; stderr: ${this.stderrTail.slice(-3).join(' | ')}` : '';
    this.lastError = `${reason}${tail}`;
    this.o.logger.warn({ mcp_server: this.name, reason }, 'MCP server lost; its tools are withdrawn until it is back');
    this.generation += 1;
    this.listed = [];
    this.health = 'failing';
    this.restarts += 1;
    const client = this.client;
    this.client = undefined;
    this.state = 'reconnecting';
    void client?.close().catch(() => undefined);
    this.o.onToolsChanged();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === 'stopped') return;
    this.state = 'reconnecting';
    const { initialMs, maxMs } = this.o.backoff;
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.attempts, 20));
    const delay = Math.round(base / 2 + (Math.random() * base) / 2);
    this.attempts += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  private async checkHealth(): Promise<void> {
    const client = this.client;
    if (this.state !== 'ready' || !client) return;
    const gen = this.generation;
    try {
      await client.ping({ timeout: Math.max(1000, Math.min(10_000, this.o.healthIntervalMs)) });
      if (gen !== this.generation) return;
      this.lastHealthAt = new Date().toISOString();
      this.health = 'ok';
      this.healthFailures = 0;
      // Up and answering for a whole interval: the next failure starts the back-off afresh.
      this.attempts = 0;
    } catch (err) {
      if (gen !== this.generation) return;
      this.healthFailures += 1;
      this.health = 'failing';
      this.lastHealthAt = new Date().toISOString();
      this.o.logger.warn({ mcp_server: this.name, err: this.redact((err as Error).message), failures: this.healthFailures }, 'MCP health check failed');
      if (this.healthFailures >= 2) this.lost(`health check failed twice: ${(err as Error).message}`);
    }
  }

  private followStderr(transport: StdioClientTransport): void {
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const raw of lines) {
        if (!raw.trim()) continue;
        const guard = /^mcp-stdio-guard: server pid (\d+)$/.exec(raw);
        if (guard) {
          this.serverPid = Number(guard[1]);
          continue;
        }
        const line = this.redact(raw);
        this.stderrTail.push(line.slice(0, 500));
        if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
        this.o.logger.debug({ mcp_server: this.name, stderr: line.slice(0, 2000) }, 'MCP server stderr');
      }
    });
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    const transport = this.transport;
    this.transport = undefined;
    if (client) await client.close().catch(() => undefined);
    else if (transport) await transport.close().catch(() => undefined);
  }
}

function fingerprint(description: string, schema: unknown): string {
  return createHash('sha256').update(description).update('\u0000').update(JSON.stringify(schema)).digest('hex');
}

function describe(err: unknown, stderr: string[]): string {
  const message = err instanceof Error ? err.message : String(err);
  return stderr.length ? `${message}; stderr: ${stderr.slice(-3).join(' | ')}` : message;
}
