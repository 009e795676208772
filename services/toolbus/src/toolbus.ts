import { randomUUID } from 'node:crypto';
import { contracts } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
// Call records are written by a direct publish on the bucket's subject (see CallRecordStore): a raw handle.
import { natsHandles } from '@hermes/bus/internal';
import { ApprovalDesk } from './approval-desk.js';
import { ApprovalIndex } from './approval-index.js';
import { ArgumentValidator } from './argument-validator.js';
import { AuditLog } from './audit-log.js';
import { memoryTools } from './memory-tools.js';
import { builtinTools } from './builtin-tools.js';
import { CallRecordStore } from './call-record.js';
import { CallRunner } from './call-runner.js';
import { serveToolsList } from './list-tools.js';
import { serveMcpCommands } from './mcp/mcp-commands.js';
import { McpHost } from './mcp/mcp-host.js';
import { followProviders } from './provider-directory.js';
import { discoverMicroProviders } from './micro-discovery.js';
import { ProviderPolicy } from './provider-policy.js';
import { ResultCache } from './result-cache.js';
import { ResultTrust } from './result-trust.js';
import { TaskAuthority } from './task-authority.js';
import { ToolCallHandler } from './tool-call-handler.js';
import { ToolExecutor } from './tool-executor.js';
import { ToolRegistry } from './tool-registry.js';
import type { ToolbusSettings } from './toolbus-settings.js';
import type { BuiltinTool } from './tool-types.js';
import { inToolCall } from './tool-call-context.js';
import { hostCall } from './synthesised-call.js';
import { ToolMetrics, observeToolbus } from './toolbus-metrics.js';

export interface ToolbusOptions {
  bus: Bus;
  settings: ToolbusSettings;
  /** Names this replica in leases and logs; default a random id. */
  instanceId?: string;
  /** Built-in tools besides the standard ones (an embedding service's own tools). */
  extraBuiltins?: readonly BuiltinTool[];
}

/** A running toolbus replica. */
export interface Toolbus {
  readonly instanceId: string;
  readonly registry: ToolRegistry;
  /** What the toolCall subject runs; callable directly by an embedding process. */
  readonly calls: ToolCallHandler;
  /** What the toolApprovalDecide subject runs. */
  readonly approvals: ApprovalDesk;
  /** The MCP servers of `MCP_CONFIG_FILE`, hosted as a tool source. */
  readonly mcp: McpHost;
  /** Stops taking requests, waits (bounded) for the calls it is executing, and flushes the audit. */
  stop(timeoutMs?: number): Promise<void>;
}

/** Opens the toolbus's buckets and streams and serves toolsList, toolCall and toolApprovalDecide. */
export async function startToolbus(o: ToolbusOptions): Promise<Toolbus> {
  const { bus, settings: s } = o;
  const instanceId = o.instanceId ?? `toolbus-${randomUUID().slice(0, 8)}`;
  const logger = bus.logger.child({ toolbus_id: instanceId });
  // Leave room for headers in the largest message the server accepts.
  const maxBytes = (bus.maxPayload ?? 1_048_576) - 16_384;

  // The toolbus owns the audit stream; declared here rather than by hostService so that an
  // embedding process (and the tests) calling startToolbus get it with the configured retention.
  await bus.ensureStreams(['toolAudit'], { tuning: { auditMaxAgeMs: s.TOOL_AUDIT_MAX_AGE_MS } });
  const store = new CallRecordStore(await bus.kv('toolCalls'), maxBytes, { nc: natsHandles(bus).nc, subjectPrefix: `$KV.${bus.subjects.buckets.toolCalls}.` });
  const cacheKv = await bus.kv('toolCache', { tuning: { toolCacheMaxTtlMs: s.TOOL_CACHE_MAX_TTL_MS } });
  const cache = new ResultCache(cacheKv, { maxTtlMs: s.TOOL_CACHE_MAX_TTL_MS, maxBytes });
  const audit = new AuditLog(bus, new ToolMetrics());

  const validator = new ArgumentValidator();
  const http = { allowedHosts: s.TOOL_HTTP_ALLOWED_HOSTS, allowPrivate: s.TOOL_HTTP_ALLOW_PRIVATE, maxBytes: s.TOOL_HTTP_MAX_BYTES };
  const providerPolicy = new ProviderPolicy({ pins: s.TOOL_PROVIDER_POLICY, defaultTimeoutMs: s.TOOL_DEFAULT_TIMEOUT_MS, logger });
  const builtins = [...builtinTools({ http }), ...memoryTools(bus), ...(o.extraBuiltins ?? [])];
  const registry = new ToolRegistry({
    validator,
    defaultTimeoutMs: s.TOOL_DEFAULT_TIMEOUT_MS,
    discoveryGraceMs: s.TOOL_DISCOVERY_GRACE_MS,
    builtins,
    providerPolicy,
    logger,
  });
  const mcp = new McpHost({
    ...(s.MCP_CONFIG_FILE ? { configFile: s.MCP_CONFIG_FILE } : {}),
    watch: s.MCP_CONFIG_WATCH,
    validator,
    logger: logger.child({ component: 'mcp' }),
    healthIntervalMs: s.MCP_HEALTH_INTERVAL_MS,
    backoff: { initialMs: Math.min(250, s.MCP_RECONNECT_MAX_MS), maxMs: s.MCP_RECONNECT_MAX_MS },
    descriptionMaxChars: s.MCP_DESCRIPTION_MAX_CHARS,
    ...(s.MCP_PID_FILE ? { pidFile: s.MCP_PID_FILE } : {}),
  });
  registry.addSource(mcp);
  const executor = new ToolExecutor({ bus, mcp });
  const trust = new ResultTrust({ store, trusted: s.TOOL_TRUSTED_RESULTS, confirmUntrusted: s.TOOL_CONFIRM_UNTRUSTED_MEMORY });
  const untrusted = (tool: { spec: { name: string }; provider: string }): boolean => !trust.isTrusted({ name: tool.spec.name, provider: tool.provider });
  const runner = new CallRunner({
    store,
    registry,
    executor,
    cache,
    audit,
    instanceId,
    leaseMs: s.TOOL_CALL_LEASE_MS,
    resultMaxChars: s.TOOL_RESULT_MAX_CHARS,
    untrusted,
    logger,
  });

  // The index's timers call back into the desk, which needs the index: bound late.
  const index = new ApprovalIndex({ kv: await bus.kv('toolApprovals'), onExpired: (key): Promise<void> => desk.expire(key), logger });
  const desk: ApprovalDesk = new ApprovalDesk({ bus, store, index, runner, audit, approvalTimeoutMs: s.TOOL_APPROVAL_TIMEOUT_MS, logger });
  const calls = new ToolCallHandler({
    store,
    registry,
    validator,
    runner,
    desk,
    cache,
    audit,
    trust,
    resultMaxChars: s.TOOL_RESULT_MAX_CHARS,
    leaseMs: s.TOOL_CALL_LEASE_MS,
  });
  await index.start();
  observeToolbus({ approvalsPending: () => index.pending().size, mcpStatus: () => mcp.status() });
  // Servers connect in the background: their tools appear as each becomes ready.
  await mcp.start();

  // Calls arriving on the bus are checked against their task; debug calls (hermes tools call) are the operator's.
  const authority = s.TOOL_TASK_CHECK ? new TaskAuthority({ bus, cacheMs: s.TOOL_TASK_CACHE_MS }) : undefined;
  const providers = await followProviders({ bus, registry, toolbusId: instanceId });
  const micro = discoverMicroProviders({ bus, registry, intervalMs: s.TOOL_SRV_DISCOVERY_INTERVAL_MS });
  // In the background: the discovery grace covers the first round as it does the discover request.
  void micro.round();
  const subs = [
    serveToolsList({ bus, registry }),
    serve(bus, contracts.toolCall, (req, ctx) => inToolCall(req, async () => calls.handle(authority ? await authority.authorize(req) : req, ctx))),
    // The gateway authenticated the API key and set owner and roles; NATS permissions let only it publish here.
    serve(bus, contracts.toolHostCall, (req) => hostCall(calls, req)),
    serve(bus, contracts.toolApprovalDecide, (d) => desk.decide(d)),
    serve(bus, contracts.toolApprovalList, (req) => desk.list(req)),
    ...serveMcpCommands({ bus, mcp, registry, calls, toolbusId: instanceId }),
  ];

  return {
    instanceId,
    registry,
    calls,
    approvals: desk,
    mcp,
    async stop(timeoutMs = 10_000) {
      // Drained, not unsubscribed: a call the server already routed here is still taken and
      // answered (an unsubscribe dropped it, and its runtime waited for a reply that never came).
      const deadline = new Promise((r) => setTimeout(r, timeoutMs).unref());
      await Promise.race([Promise.all(subs.map((sub) => sub.drain())), deadline]);
      // Every call taken is finished, not only those already running: one still reading or writing
      // its record would otherwise meet a closed connection and be answered with an error.
      await Promise.race([Promise.all([calls.settle(), runner.settle()]), deadline]);
      providers.unsubscribe();
      micro.stop();
      await index.stop();
      await mcp.stop();
      await audit.flush();
    },
  };
}
