import { Type, type Static } from '@sinclair/typebox';
import { ProviderPolicySetting } from './provider-policy.js';

/** The toolbus's own settings (environment variables; arrays as JSON). */
export const toolbusSettings = Type.Object({
  TOOL_DEFAULT_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 1, maximum: 3_600_000, description: 'timeout of a tool that does not declare timeout_ms' }),
  TOOL_RESULT_MAX_CHARS: Type.Integer({
    default: 16_000,
    minimum: 200,
    description: 'longest result (as JSON) handed to the model; longer ones are truncated',
  }),
  TOOL_APPROVAL_TIMEOUT_MS: Type.Integer({ default: 900_000, minimum: 1000, description: 'how long a require_confirm call waits for a decision' }),
  TOOL_CALL_LEASE_MS: Type.Integer({
    default: 10_000,
    minimum: 1000,
    description: 'a running call whose toolbus has not renewed its lease this long is taken over',
  }),
  TOOL_DISCOVERY_GRACE_MS: Type.Integer({
    default: 3000,
    minimum: 0,
    description:
      'for this long after start, a call of a tool no provider has announced yet is refused as provider_unavailable (the runtime asks again) rather than answered tool_not_found',
  }),
  TOOL_SRV_DISCOVERY_INTERVAL_MS: Type.Integer({
    default: 10_000,
    minimum: 200,
    description:
      'how often the toolbus looks for tool providers that are NATS micro services ($SRV.PING, then $SRV.INFO.<name>); one that misses two rounds is dropped',
  }),
  TOOL_CACHE_MAX_TTL_MS: Type.Integer({ default: 3_600_000, minimum: 1000, description: 'longest a cached result is kept, whatever a tool asks for' }),
  TOOL_AUDIT_MAX_AGE_MS: Type.Integer({ default: 30 * 86_400_000, minimum: 60_000, description: 'how long audit records stay in the audit stream' }),
  TOOL_HTTP_ALLOWED_HOSTS: Type.Array(Type.String({ minLength: 1 }), {
    default: [],
    description: 'JSON array of hosts http_get may fetch ("example.com", "api.example.com:8443", "*.example.com"); empty = none',
  }),
  TOOL_HTTP_ALLOW_PRIVATE: Type.Boolean({ default: false, description: 'let http_get reach loopback, private and link-local addresses' }),
  TOOL_HTTP_MAX_BYTES: Type.Integer({ default: 1_000_000, minimum: 1024, description: 'bytes of a response body http_get reads at most' }),
  TOOL_PROVIDER_POLICY: ProviderPolicySetting,
  TOOL_TRUSTED_RESULTS: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
    default: [],
    description:
      'JSON array of tool names whose results are trusted (a remember call after them writes with provenance model, unasked); every other tool but the built-ins that only compute or read memory is untrusted',
  }),
  TOOL_CONFIRM_UNTRUSTED_MEMORY: Type.Boolean({
    default: true,
    description:
      "a remember call in a task where an untrusted tool result came back earlier waits for a person's approval, like a require_confirm tool (its memory keeps provenance tool_result either way)",
  }),
  TOOL_TASK_CHECK: Type.Boolean({
    default: true,
    description:
      "take a call's user, roles and allow-list from the task record (taskGet) and refuse calls of unknown or ended tasks; off only for a toolbus without a dispatcher (its own tests, embedding)",
  }),
  TOOL_TASK_CACHE_MS: Type.Integer({
    default: 2000,
    minimum: 0,
    maximum: 60_000,
    description: 'how long a live task record is reused for its calls before the dispatcher is asked again',
  }),
  MCP_CONFIG_FILE: Type.String({ default: '', description: 'the MCP servers config file (JSON, or YAML); empty = no MCP servers' }),
  MCP_CONFIG_WATCH: Type.Boolean({
    default: true,
    description: 're-read the MCP config file when it changes, on this replica (hermes mcp reload always works, on every replica)',
  }),
  MCP_HEALTH_INTERVAL_MS: Type.Integer({
    default: 30_000,
    minimum: 100,
    description: 'how often each MCP server is pinged; two failures in a row reconnect it',
  }),
  MCP_RECONNECT_MAX_MS: Type.Integer({ default: 30_000, minimum: 100, description: 'longest back-off between attempts to restart or reconnect an MCP server' }),
  MCP_PID_FILE: Type.String({
    default: '',
    description:
      "a file of this replica's own (kept across its restarts) where stdio MCP servers are recorded; on start the toolbus kills those a previous run left; empty = none",
  }),
  MCP_DESCRIPTION_MAX_CHARS: Type.Integer({
    default: 1024,
    minimum: 64,
    maximum: 1900,
    description: 'MCP tool descriptions (untrusted) are cut to this length',
  }),
});
export type ToolbusSettings = Static<typeof toolbusSettings>;

/** Every setting at its default. */
export function defaultToolbusSettings(): ToolbusSettings {
  const entries = Object.entries(toolbusSettings.properties).map(([key, schema]) => [key, structuredClone((schema as { default: unknown }).default)]);
  return Object.fromEntries(entries) as ToolbusSettings;
}
