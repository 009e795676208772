import { contracts, validate, ToolProviderAnnouncement } from '@hermes/contracts';
import { decodeJson, type Bus } from '@hermes/bus';
import type { Subscription } from '@nats-io/transport-node';
import type { ToolRegistry } from './tool-registry.js';

/**
 * Listens to remote providers' announcements (core pub/sub on `…providers.announce.<provider>`,
 * every replica hears them all) and feeds those made on their provider's own subject to the registry; then asks every provider to announce itself at once, so a freshly
 * started toolbus does not wait a whole heartbeat period to know its tools.
 */
export async function followProviders(opts: { bus: Bus; registry: ToolRegistry; toolbusId: string }): Promise<Subscription> {
  const { bus, registry } = opts;
  const sub = bus.subscribe(bus.subjects.toolProvidersAnnounceAll, (msg) => {
    const decoded = decodeJson(msg.data);
    const checked = decoded.ok ? validate(ToolProviderAnnouncement, decoded.value) : undefined;
    if (!checked?.ok) {
      bus.logger.warn({ issues: checked?.issues, reason: decoded.ok ? undefined : decoded.message }, 'ignoring an invalid provider announcement');
      return;
    }
    // A provider speaks only on its own subject, which only its NATS user may publish to: an
    // announcement naming another provider is a spoof (or a misconfigured provider) and is dropped.
    if (msg.subject !== bus.subjects.toolProviderAnnounce(checked.value.provider)) {
      bus.logger.warn({ provider: checked.value.provider, subject: msg.subject }, 'ignoring a provider announcement on another provider’s subject');
      return;
    }
    registry.announce(checked.value);
  });
  // The subscription must be known to the server before providers answer the discover request.
  await bus.flush();
  await bus.publish(contracts.toolProvidersDiscover, { toolbus_id: opts.toolbusId });
  return sub;
}
