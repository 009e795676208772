import { Type } from '@sinclair/typebox';
import { hostService } from '@hermes/bus';
import { builtinTools } from './builtin-tools.js';
import { serveToolsList } from './list-tools.js';
import { ToolRegistry } from './tool-registry.js';

await hostService({
  service: 'toolbus',
  // No settings of its own yet: MCP server configuration and tool timeouts come with execution.
  settings: Type.Object({}),
  start: async ({ bus, logger }) => {
    const registry = new ToolRegistry({ tools: builtinTools });
    const sub = serveToolsList({ bus, registry });
    logger.info({ tools: registry.list().map((t) => t.name) }, 'serving tool list');
    return {
      stop: async () => {
        await sub.drain();
      },
    };
  },
});
