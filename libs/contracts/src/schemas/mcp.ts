import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.js';
import { Team } from '../owner.js';

const ServerName = Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'an MCP server name from the config file' });

/** A problem of the MCP config: the server and field it concerns (never a secret's value). */
export const McpConfigProblem = Type.Object(
  { server: Type.Optional(Type.String()), field: Type.Optional(Type.String()), message: Type.String() },
  { title: 'McpConfigProblem', additionalProperties: false },
);

/** A tool whose description or schema changed after the toolbus first saw it (rug-pull defence). */
export const McpToolChange = Type.Object(
  {
    tool: Type.String({ description: "the server's own tool name" }),
    detected_at: Type.String({ format: 'date-time' }),
    held: Type.Boolean({ description: 'hidden from models until approved (server has pin_tools)' }),
  },
  { title: 'McpToolChange', additionalProperties: false },
);

export const McpServerStatus = Type.Object(
  {
    name: Type.String(),
    transport: Type.Union([Type.Literal('stdio'), Type.Literal('http')]),
    state: Type.Union([Type.Literal('connecting'), Type.Literal('ready'), Type.Literal('reconnecting'), Type.Literal('stopped')]),
    health: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('unknown')]),
    http_mode: Type.Optional(Type.Union([Type.Literal('streamable'), Type.Literal('sse')])),
    pid: Type.Optional(Type.Integer()),
    tools: Type.Array(Type.String(), { description: 'the names models see' }),
    changed_tools: Type.Array(McpToolChange),
    restarts: Type.Integer({ minimum: 0 }),
    last_error: Type.Optional(Type.String()),
    ready_since: Type.Optional(Type.String()),
    last_health_at: Type.Optional(Type.String()),
    server_info: Type.Optional(Type.Object({ name: Type.String(), version: Type.String() })),
    config: Type.Record(Type.String(), Type.Unknown(), { description: 'the server config with env and header values hidden' }),
  },
  { title: 'McpServerStatus', additionalProperties: false },
);

export const McpStatusRequest = Type.Object({}, { title: 'McpStatusRequest', additionalProperties: false });
export const McpStatusReply = Type.Object(
  {
    toolbus_id: Type.String({ description: 'the replica that answered (each replica runs its own MCP clients)' }),
    config_file: Type.Optional(Type.String()),
    loaded_at: Type.Optional(Type.String()),
    problems: Type.Array(McpConfigProblem),
    servers: Type.Array(McpServerStatus),
    skipped_tools: Type.Array(Type.Object({ server: Type.String(), tool: Type.String(), reason: Type.String() }, { additionalProperties: false })),
  },
  { title: 'McpStatusReply', additionalProperties: false },
);
export type McpStatusReply = Static<typeof McpStatusReply>;

export const McpReloadRequest = Type.Object({}, { title: 'McpReloadRequest', additionalProperties: false });
export const McpReloadReply = Type.Object(
  {
    toolbus_id: Type.String(),
    added: Type.Array(Type.String()),
    removed: Type.Array(Type.String()),
    restarted: Type.Array(Type.String()),
    unchanged: Type.Array(Type.String()),
    problems: Type.Array(McpConfigProblem),
  },
  { title: 'McpReloadReply', additionalProperties: false },
);
export type McpReloadReply = Static<typeof McpReloadReply>;

/** Sent by the replica that took a reload request, so every other replica re-reads the config too. */
export const McpReloadBroadcast = Type.Object({ toolbus_id: Type.String() }, { title: 'McpReloadBroadcast', additionalProperties: false });

export const McpCallRequest = Type.Object(
  {
    server: ServerName,
    tool: Type.String({ minLength: 1, description: "the server's own tool name (not prefixed)" }),
    arguments: Type.Record(Type.String(), Type.Unknown()),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  },
  { title: 'McpCallRequest', additionalProperties: false },
);
export type McpCallRequest = Static<typeof McpCallRequest>;
export const McpCallReply = Type.Object(
  { result: Type.Record(Type.String(), Type.Unknown(), { description: 'the MCP CallToolResult as the server sent it' }) },
  { title: 'McpCallReply', additionalProperties: false },
);
export type McpCallReply = Static<typeof McpCallReply>;

export const McpResourcesRequest = Type.Object(
  {
    server: ServerName,
    read: Type.Optional(Type.String({ minLength: 1, description: 'read this resource URI instead of listing' })),
    prompt: Type.Optional(Type.String({ minLength: 1, description: 'get this prompt instead of listing' })),
    prompt_arguments: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { title: 'McpResourcesRequest', additionalProperties: false },
);
export type McpResourcesRequest = Static<typeof McpResourcesRequest>;
export const McpResourcesReply = Type.Object(
  {
    resources: Type.Optional(Type.Array(Type.Unknown())),
    templates: Type.Optional(Type.Array(Type.Unknown())),
    prompts: Type.Optional(Type.Array(Type.Unknown())),
    contents: Type.Optional(Type.Unknown({ description: 'the ReadResourceResult of `read`' })),
    prompt: Type.Optional(Type.Unknown({ description: 'the GetPromptResult of `prompt`' })),
  },
  { title: 'McpResourcesReply', additionalProperties: false },
);
export type McpResourcesReply = Static<typeof McpResourcesReply>;

export const McpApproveChangeRequest = Type.Object(
  {
    server: Type.String({
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: 'an MCP server name from the config file, or a remote tool provider whose relaxed policy is held',
    }),
    tool: Type.Optional(Type.String({ description: 'one tool; absent = every changed tool of the server' })),
  },
  { title: 'McpApproveChangeRequest', additionalProperties: false },
);
export const McpApproveChangeReply = Type.Object(
  { toolbus_id: Type.String(), approved: Type.Array(Type.String()) },
  { title: 'McpApproveChangeReply', additionalProperties: false },
);

/**
 * A tool call for debugging (`hermes tools call`): it goes through the ToolBus's whole path
 * (validation, permissions, approvals, audit, exactly-once) under a synthesised debug task.
 */
export const ToolDebugCallRequest = Type.Object(
  {
    tool: Type.String({ minLength: 1 }),
    arguments: Type.String({ maxLength: 1_000_000, description: 'the argument text, as a model would send it' }),
    user_id: Type.Optional(Id),
    roles: Type.Optional(Type.Array(Type.String(), { description: 'default ["admin"]' })),
  },
  { title: 'ToolDebugCallRequest', additionalProperties: false },
);
export type ToolDebugCallRequest = Static<typeof ToolDebugCallRequest>;

/**
 * A tool call of an MCP host (the gateway's `/mcp`): owner and roles are the API key's, set by the
 * gateway after authenticating it, so only the gateway may publish this request.
 */
export const ToolHostCallRequest = Type.Object(
  {
    tool: Type.String({ minLength: 1 }),
    arguments: Type.String({ maxLength: 1_000_000, description: 'the arguments as JSON text' }),
    user_id: Id,
    team: Type.Optional(Team),
    roles: Type.Array(Type.String(), { description: "the API key's roles" }),
    task_id: Type.Optional(
      Type.String({
        pattern: '^mcp_[0-9a-f]{32}$',
        description:
          "the call's synthesised task, named by the gateway so that it can ask again (same tool and arguments) for the outcome of a call parked for approval; absent: a fresh one",
      }),
    ),
  },
  { title: 'ToolHostCallRequest', additionalProperties: false },
);
export type ToolHostCallRequest = Static<typeof ToolHostCallRequest>;
