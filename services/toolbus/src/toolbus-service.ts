import type { HostServiceOptions } from '@hermes/service-host';
import { startToolbus } from './toolbus.js';
import { toolbusSettings } from './toolbus-settings.js';

/** The toolbus: its settings, streams and wiring (main.ts hosts it). */
export const toolbusService: HostServiceOptions<typeof toolbusSettings> = {
  service: 'toolbus',
  settings: toolbusSettings,
  // Approval requests are step events on the task's event stream.
  uses: ['taskEvents'],
  start: async ({ bus, config, logger }) => {
    const toolbus = await startToolbus({ bus, settings: config });
    logger.info({ toolbus_id: toolbus.instanceId, tools: toolbus.registry.all().map((t) => t.spec.name) }, 'toolbus serving');
    return { stop: (timeoutMs) => toolbus.stop(timeoutMs) };
  },
};
