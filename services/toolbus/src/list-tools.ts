import { contracts, type ToolDefinition, type ToolsListReply, type ToolsListRequest } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
import type { ToolRegistry } from './tool-registry.js';
import type { ToolHost } from './tool-types.js';

/**
 * The tools a caller may use: built-in and remote ones, those whose roles the caller has (a tool
 * without roles is open to all), narrowed by the task's allow-list when there is one (an empty
 * list offers none; names the registry does not know are ignored). The same checks run again
 * when a call arrives, so the list is a courtesy to the model, not the guard.
 */
export function listTools(registry: ToolRegistry, req: ToolsListRequest): ToolsListReply {
  const tools = registry.usableBy({ roles: req.roles ?? [], ...(req.allow ? { allow: req.allow } : {}) });
  return {
    tools: tools.map(({ spec, host }) => ({
      name: spec.name,
      description: spec.description,
      parameters: spec.parameters,
      ...(spec.idempotent && !spec.require_confirm ? { idempotent: true } : {}),
      origin: originOf(host),
      ...(spec.require_confirm ? { requires_approval: true } : {}),
      ...(spec.require_evidence ? { require_evidence: true } : {}),
    })),
  };
}

function originOf(host: ToolHost): NonNullable<ToolDefinition['origin']> {
  if (host.kind === 'builtin') return { kind: 'builtin' };
  return host.kind === 'mcp' ? { kind: 'mcp', name: host.server } : { kind: 'provider', name: host.provider };
}

/** Answers the toolsList request on the toolbus queue group. */
export function serveToolsList(opts: { bus: Bus; registry: ToolRegistry }): ReturnType<typeof serve> {
  return serve(opts.bus, contracts.toolsList, async (req) => listTools(opts.registry, req));
}
