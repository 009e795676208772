import { contracts, validate, ToolProviderAnnouncement } from '@hermes/contracts';
import { decodeJson, type Bus } from '@hermes/bus';
import type { Subscription } from '@nats-io/transport-node';
import type { ToolRegistry } from './tool-registry.js';

/**
 * Listens to remote providers' announcements (core pub/sub, every replica hears them all) and
 * feeds them to the registry; then asks every provider to announce itself at once, so a freshly
 * started toolbus does not wait a whole heartbeat period to know its tools.
 */
export async function followProviders(opts: { bus: Bus; registry: ToolRegistry; toolbusId: string }): Promise<Subscription> {
  const { bus, registry } = opts;
  const sub = bus.subscribe(bus.subjects.toolProvidersAnnounce, (msg) => {
      const decoded = decodeJson(msg.data);
      const checked = decoded.ok ? validate(ToolProviderAnnouncement, decoded.value) : undefined;
      if (!checked?.ok) {
        bus.logger.warn({ issues: checked?.issues, reason: decoded.ok ? undefined : decoded.message }, 'ignoring an invalid provider announcement');
        return;
      }
    registry.announce(checked.value);
  });
  // The subscription must be known to the server before providers answer the discover request.
  await bus.flush();
  await bus.publish(contracts.toolProvidersDiscover, { toolbus_id: opts.toolbusId });
  return sub;
}
