import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.js';
import { Team } from '../owner.js';

/** A tool as offered to a model: an OpenAI-style function definition, and how the runtime may call it. */
export const ToolDefinition = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    description: Type.String({ maxLength: 2048 }),
    parameters: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments' }),
    idempotent: Type.Optional(
      Type.Boolean({ description: 'side-effect free and needs no approval: the runtime may send its calls while their turn is still being checkpointed' }),
    ),
    // For people reading the list (the console, GET /v1/tools); the runtime hands models only name, description and parameters.
    origin: Type.Optional(
      Type.Object(
        {
          kind: Type.Union([Type.Literal('builtin'), Type.Literal('provider'), Type.Literal('mcp')]),
          name: Type.Optional(Type.String({ description: 'the remote tool provider or MCP server' })),
        },
        { additionalProperties: false, description: 'where the tool runs' },
      ),
    ),
    requires_approval: Type.Optional(Type.Boolean({ description: 'a person approves each call first (require_confirm)' })),
    require_evidence: Type.Optional(Type.Boolean({ description: 'a job that called this tool must cite its results in the final answer (evidence gate)' })),
  },
  { title: 'ToolDefinition', additionalProperties: false },
);
export type ToolDefinition = Static<typeof ToolDefinition>;

export const ToolsListRequest = Type.Object(
  {
    user_id: Type.Optional(Id),
    team: Type.Optional(Team),
    roles: Type.Optional(Type.Array(Type.String())),
    allow: Type.Optional(Type.Array(Type.String(), { description: "the task's tool allow-list" })),
  },
  { title: 'ToolsListRequest', additionalProperties: false },
);
export type ToolsListRequest = Static<typeof ToolsListRequest>;

export const ToolsListReply = Type.Object({ tools: Type.Array(ToolDefinition) }, { title: 'ToolsListReply', additionalProperties: false });
export type ToolsListReply = Static<typeof ToolsListReply>;
