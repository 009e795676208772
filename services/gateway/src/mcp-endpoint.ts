import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type ProgressToken, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { request, submitTask, type Bus } from '@hermes/bus';
import { contracts, Id, TaskRequest, validate, type ToolCallReply } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import type { Caller } from './auth.js';
import { ask, HttpError, problemOf } from './http-errors.js';
import { readJsonBody } from './json-body.js';
import { hostToolCall, type ApprovalWait } from './mcp-host-call.js';
import { getTask } from './task-routes.js';

export interface McpEndpointOptions {
  bus: Bus;
  logger: Logger;
  maxBodyBytes: number;
  /** While a tool call waits for approval, ask the toolbus again (and send progress) this often. Default 15 000. */
  approvalPollMs?: number;
}

/** Answers one MCP request of an authenticated caller. */
export type McpEndpoint = (req: IncomingMessage, res: ServerResponse, caller: Caller) => Promise<void>;

/** The MCP tools Hermes itself offers, beside the caller's Hermes tools. */
export const SUBMIT_TOOL = 'hermes_submit_task';
export const STATUS_TOOL = 'hermes_task_status';

const SUBMIT_SPEC: Tool = {
  name: SUBMIT_TOOL,
  description: 'Hand a goal to Hermes agents as a task of the API key owner; answers the task id to follow with hermes_task_status.',
  inputSchema: {
    type: 'object',
    properties: {
      goal: { type: 'string', minLength: 1, maxLength: 20_000, description: 'what the agent should achieve, in plain language' },
      inputs: { type: 'object', description: 'structured inputs the goal refers to' },
      tools: { type: 'array', items: { type: 'string' }, description: 'allow-list of tool names; absent = every tool the user may use' },
    },
    required: ['goal'],
  },
};

const STATUS_SPEC: Tool = {
  name: STATUS_TOOL,
  description: "A task's status and, once it has ended, its result or error.",
  inputSchema: { type: 'object', properties: { task_id: { type: 'string', description: 'the id hermes_submit_task answered' } }, required: ['task_id'] },
};

/**
 * `/mcp`: Hermes as an MCP server over Streamable HTTP, stateless (a fresh server per request, so
 * any gateway replica answers any request and nothing is kept between them). It offers the tools
 * the API key's roles may use, each call run by the toolbus (`toolHostCall`: permissions,
 * argument checks, approvals, audit) as the key's owner, and two tools to submit and follow tasks.
 * A call that needs approval is answered once a person decided it (or its approval timed out);
 * meanwhile a host that asked for progress (`_meta.progressToken`) gets a progress notification per
 * poll over an SSE response, every other request a plain JSON response.
 */
export function createMcpEndpoint(o: McpEndpointOptions): McpEndpoint {
  return async (req, res, caller) => {
    // The SDK would read any body; reading it here bounds it like every other request body.
    const body = req.method === 'POST' ? await readJsonBody(req, o.maxBodyBytes) : undefined;
    const server = mcpServerFor(o, caller);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !asksForProgress(body) });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}

function mcpServerFor(o: McpEndpointOptions, caller: Caller): Server {
  const server = new Server({ name: 'hermes', version: '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const { tools } = await ask(() => request(o.bus, contracts.toolsList, { user_id: caller.user_id, team: caller.team, roles: [...caller.roles] }));
    const hermesTools: Tool[] = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object', ...(t.parameters as object) } }));
    return { tools: [SUBMIT_SPEC, STATUS_SPEC, ...hermesTools] };
  });
  server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) => {
    try {
      if (params.name === SUBMIT_TOOL) return await submit(o, caller, params.arguments ?? {});
      if (params.name === STATUS_TOOL) return await status(o, caller, params.arguments ?? {});
      const progressToken = params._meta?.progressToken;
      const reply = await hostToolCall({
        bus: o.bus,
        caller,
        tool: params.name,
        arguments: JSON.stringify(params.arguments ?? {}),
        approvalPollMs: o.approvalPollMs ?? 15_000,
        signal: extra.signal,
        ...(progressToken !== undefined
          ? {
              onWaiting: (wait: ApprovalWait) =>
                extra
                  .sendNotification({ method: 'notifications/progress', params: progressOf(progressToken, wait) })
                  // A lost notice only leaves the host without news; the wait goes on.
                  .catch((err: unknown) => o.logger.warn({ err, tool: params.name }, 'could not send MCP progress')),
            }
          : {}),
      });
      return toolResult(reply);
    } catch (err) {
      // A problem the caller can act on is a tool error the host shows (the MCP way), not a protocol error.
      if (err instanceof HttpError) return failed(problemOf(err));
      o.logger.error({ err, tool: params.name }, 'MCP tool call failed');
      return failed({ code: 'internal', message: 'internal error', retryable: true });
    }
  });
  return server;
}

async function submit(o: McpEndpointOptions, caller: Caller, args: Record<string, unknown>): Promise<CallToolResult> {
  const checked = validate(TaskRequest, { ...args, user_id: caller.user_id });
  if (!checked.ok) return failed({ code: 'invalid_arguments', message: 'not a valid task request', issues: checked.issues, retryable: false });
  const submitted = await ask(() => submitTask(o.bus, checked.value, { team: caller.team, source: `/hermes/gateway/${caller.user_id}` }));
  return done({ task_id: submitted.taskId, status: 'submitted' });
}

async function status(o: McpEndpointOptions, caller: Caller, args: Record<string, unknown>): Promise<CallToolResult> {
  if (!validate(Id, args.task_id).ok) return failed({ code: 'invalid_arguments', message: 'task_id must be a task id', retryable: false });
  const view = await getTask(o.bus, args.task_id as string, caller);
  return done({
    task_id: view.task_id,
    status: view.status,
    ...(view.result !== undefined ? { result: view.result } : {}),
    ...(view.error !== undefined ? { error: view.error } : {}),
  });
}

/** Whether the request is a tool call whose host wants progress notifications (which only an SSE response carries). */
function asksForProgress(body: unknown): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const msg = m as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null;
    return msg?.method === 'tools/call' && msg.params?._meta?.progressToken !== undefined;
  });
}

function progressOf(progressToken: ProgressToken, wait: ApprovalWait): { progressToken: ProgressToken; progress: number; message: string } {
  return {
    progressToken,
    progress: wait.round,
    message: `tool call ${wait.call_id} waits for a person's approval (until ${wait.expires_at})`,
  };
}

/** A toolbus reply as an MCP result: `ok` is the result, anything else (error, denied, timed out) a tool error naming the call. */
function toolResult(reply: ToolCallReply): CallToolResult {
  if (reply.status === 'ok') return done({ call_id: reply.call_id, result: reply.result ?? null });
  if (reply.status === 'pending_approval') {
    // Only when the host went away while the call waited: nobody reads this, but the call stays parked.
    return failed({
      code: 'pending_approval',
      message: 'the MCP host stopped waiting; the call still waits for approval and runs if approved',
      call_id: reply.call_id,
      expires_at: reply.approval_expires_at,
      retryable: false,
    });
  }
  return failed({ call_id: reply.call_id, ...reply.error });
}

function done(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function failed(error: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify({ error }) }], structuredContent: { error }, isError: true };
}
