import type { Counter, Histogram } from '@opentelemetry/api';
import type { ToolAuditRecord } from '@hermes/contracts';
import { hermesMeter } from '@hermes/telemetry';
import type { McpHostStatus } from './mcp/mcp-host.js';

/**
 * Tool call metrics, fed from the audit records (every outcome of every call passes there once).
 * Created after telemetry start-up, so they bind to the registered MeterProvider.
 */
export class ToolMetrics {
  private readonly calls: Counter;
  private readonly duration: Histogram;

  constructor() {
    const m = hermesMeter();
    this.calls = m.createCounter('hermes.tool.calls', {
      unit: '{call}',
      description: 'tool call requests answered, by tool, outcome (ok, error, denied, pending_approval) and error code',
    });
    this.duration = m.createHistogram('hermes.tool.duration', {
      unit: 's',
      description: 'time a tool ran (calls that ran here; replays and cache hits excluded), by tool and outcome',
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] },
    });
  }

  record(r: ToolAuditRecord): void {
    const base = { 'gen_ai.tool.name': r.tool, outcome: r.outcome };
    this.calls.add(1, { ...base, ...(r.error_code ? { 'error.type': r.error_code } : {}), replayed: r.replayed, cached: r.cached });
    if (!r.replayed && !r.cached && (r.outcome === 'ok' || r.outcome === 'error') && r.duration_ms > 0) this.duration.record(r.duration_ms / 1000, base);
  }
}

const MCP_STATES = ['connecting', 'ready', 'reconnecting', 'stopped'] as const;

/**
 * Gauges read when metrics are collected: calls waiting for approval (cluster-wide, from the
 * replicated approval index: aggregate with max) and each MCP server's state and health as this
 * replica's supervisor sees it (each replica runs its own MCP clients).
 */
export function observeToolbus(o: { approvalsPending: () => number; mcpStatus: () => McpHostStatus }): void {
  const m = hermesMeter();
  m.createObservableGauge('hermes.tool.approvals.pending', {
    unit: '{call}',
    description: 'tool calls waiting for a person to approve or deny them',
  }).addCallback((r) => r.observe(o.approvalsPending()));
  const state = m.createObservableGauge('hermes.mcp.server.state', {
    description: '1 for the state an MCP server is in (connecting, ready, reconnecting, stopped), 0 for the others',
  });
  const healthy = m.createObservableGauge('hermes.mcp.server.healthy', { description: 'MCP server health checks: 1 ok, 0 failing, -1 not checked yet' });
  const tools = m.createObservableGauge('hermes.mcp.server.tools', { unit: '{tool}', description: 'tools an MCP server offers to models' });
  const restarts = m.createObservableCounter('hermes.mcp.server.restarts', {
    unit: '{restart}',
    description: 'times the supervisor restarted or reconnected an MCP server',
  });
  m.addBatchObservableCallback(
    (r) => {
      for (const s of o.mcpStatus().servers) {
        const server = { 'hermes.mcp.server': s.name };
        for (const st of MCP_STATES) r.observe(state, s.state === st ? 1 : 0, { ...server, state: st });
        r.observe(healthy, s.health === 'ok' ? 1 : s.health === 'failing' ? 0 : -1, server);
        r.observe(tools, s.tools.length, server);
        r.observe(restarts, s.restarts, server);
      }
    },
    [state, healthy, tools, restarts],
  );
}
