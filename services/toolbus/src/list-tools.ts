import { contracts, type ToolsListReply, type ToolsListRequest } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
import type { ToolRegistry } from './tool-registry.js';

/**
 * The tools a caller may use. Without `allow` every tool is offered; with it, only the tools it
 * names (an empty list offers none, and names the registry does not know are ignored).
 * `user_id` and `roles` are accepted but not enforced yet: per-role permissions arrive together
 * with tool execution, where they must also be checked again before a call runs.
 */
export function listTools(registry: ToolRegistry, req: ToolsListRequest): ToolsListReply {
  const allowed = req.allow ? new Set(req.allow) : undefined;
  return { tools: registry.list().filter((tool) => !allowed || allowed.has(tool.name)) };
}

/** Answers the toolsList request on the toolbus queue group. */
export function serveToolsList(opts: { bus: Bus; registry: ToolRegistry }): ReturnType<typeof serve> {
  return serve(opts.bus, contracts.toolsList, async (req) => listTools(opts.registry, req));
}
