import { request, type Bus } from '@hermes/bus';
import { contracts, type LlmPoolsReply } from '@hermes/contracts';
import { readPoolStatus } from '@hermes/semaphore';
import { ask, HttpError, sendJson } from './http-errors.js';
import type { RouteHandler } from './task-routes.js';

/**
 * `GET /v1/tools` (the tools the caller may use, with the caller's roles), `GET /v1/mcp/servers`
 * (the MCP servers of one toolbus replica: state, health, held description changes; admins only,
 * since it shows server addresses and config problems) and `GET /v1/llm/pools` (the LLM pools of
 * the cluster-wide semaphore: capacity, in flight, waiters, back-off, token budget).
 */
export function createPlatformRoutes(deps: { bus: Bus }): { tools: RouteHandler; mcpServers: RouteHandler; llmPools: RouteHandler } {
  return {
    async tools({ res, caller }) {
      sendJson(res, 200, await ask(() => request(deps.bus, contracts.toolsList, { user_id: caller.user_id, team: caller.team, roles: [...caller.roles] })));
    },

    async mcpServers({ res, caller }) {
      if (!caller.isAdmin) throw new HttpError(403, { code: 'forbidden', message: 'only an admin may read the MCP servers' });
      sendJson(res, 200, await ask(() => request(deps.bus, contracts.mcpStatus, {})));
    },

    async llmPools({ res }) {
      const pools = await ask(async () => readPoolStatus(await deps.bus.kv('llmSemaphore')));
      sendJson(res, 200, { pools } satisfies LlmPoolsReply);
    },
  };
}
