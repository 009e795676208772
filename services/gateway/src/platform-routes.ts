import { request, type Bus } from '@hermes/bus';
import { contracts, McpApproveChangeRequest, validate, type LlmPoolsReply } from '@hermes/contracts';
import { readPoolStatus } from '@hermes/semaphore';
import type { Logger } from '@hermes/telemetry';
import { ask, HttpError, sendJson } from './http-errors.js';
import type { RouteHandler } from './task-routes.js';

/**
 * `GET /v1/tools` (the tools the caller may use, with the caller's roles), `GET /v1/mcp/servers`
 * (the MCP servers of one toolbus replica: state, health, held description changes; admins only,
 * since it shows server addresses and config problems) and `GET /v1/llm/pools` (the LLM pools of
 * the cluster-wide semaphore: capacity, in flight, waiters, back-off, token budget), and
 * `POST /v1/mcp/servers/:server/approve-change` (accept held MCP description changes; admins only).
 */
export function createPlatformRoutes(deps: { bus: Bus; logger: Logger }): {
  tools: RouteHandler;
  mcpServers: RouteHandler;
  approveMcpChange: RouteHandler;
  llmPools: RouteHandler;
} {
  return {
    async tools({ res, caller }) {
      sendJson(res, 200, await ask(() => request(deps.bus, contracts.toolsList, { user_id: caller.user_id, team: caller.team, roles: [...caller.roles] })));
    },

    async mcpServers({ res, caller }) {
      if (!caller.isAdmin) throw new HttpError(403, { code: 'forbidden', message: 'only an admin may read the MCP servers' });
      sendJson(res, 200, await ask(() => request(deps.bus, contracts.mcpStatus, {})));
    },

    /** Like `hermes mcp approve-change`: the answering toolbus replica offers the changed tools again. */
    async approveMcpChange({ req, res, caller, params }) {
      if (!caller.isAdmin) throw new HttpError(403, { code: 'forbidden', message: 'only an admin may approve MCP description changes' });
      const tool = new URL(req.url ?? '/', 'http://gateway').searchParams.get('tool');
      const checked = validate(McpApproveChangeRequest, { server: params[0] ?? '', ...(tool ? { tool } : {}) });
      if (!checked.ok) throw new HttpError(400, { code: 'invalid_server', message: 'server must be 1-64 letters, digits, _ or -', issues: checked.issues });
      const reply = await ask(() => request(deps.bus, contracts.mcpApproveChange, checked.value));
      // Accepting a changed description is the rug-pull defence's override: who did it is kept in the gateway's log.
      deps.logger.info(
        { user_id: caller.user_id, team: caller.team, server: checked.value.server, tools: reply.approved, toolbus_id: reply.toolbus_id },
        'MCP description change approved',
      );
      sendJson(res, 200, reply);
    },

    async llmPools({ res }) {
      const pools = await ask(async () => readPoolStatus(await deps.bus.kv('llmSemaphore')));
      sendJson(res, 200, { pools } satisfies LlmPoolsReply);
    },
  };
}
