import { hermesMeter } from '@hermes/telemetry';
import type { Bus } from './bus.js';
import { consumerConfig, type ConsumerKey } from './stream-specs.js';
import { natsHandles } from './bus.js';

/**
 * Observes the durable consumers a service declared: `num_pending` (messages not yet delivered:
 * the backlog KEDA scales on), `num_ack_pending` and `num_redelivered`, per stream and consumer.
 * Read from consumer info only when metrics are collected (export interval or scrape), never on
 * the message path. Every replica reports the same figures: aggregate with max, not sum.
 */
export function observeConsumers(bus: Bus, keys: readonly ConsumerKey[]): void {
  if (!keys.length) return;
  const meter = hermesMeter();
  const pending = meter.createObservableGauge('hermes.bus.consumer.pending', {
    unit: '{message}',
    description: 'messages in the stream not yet delivered to the consumer (num_pending; what KEDA scales on)',
  });
  const ackPending = meter.createObservableGauge('hermes.bus.consumer.ack_pending', {
    unit: '{message}',
    description: 'messages delivered and not yet acknowledged (in progress)',
  });
  const redelivered = meter.createObservableGauge('hermes.bus.consumer.redelivered', {
    unit: '{message}',
    description: 'messages delivered more than once and not yet acknowledged',
  });
  meter.addBatchObservableCallback(
    async (result) => {
      await Promise.all(
        keys.map(async (key) => {
          const { stream, config } = consumerConfig(bus.subjects, key, bus.tuning);
          const info = await natsHandles(bus)
            .jsm.consumers.info(stream, config.durable_name)
            .catch(() => undefined);
          if (!info) return;
          const attrs = { 'messaging.system': 'nats', 'messaging.destination.name': stream, 'messaging.consumer.group.name': config.durable_name };
          result.observe(pending, info.num_pending, attrs);
          result.observe(ackPending, info.num_ack_pending, attrs);
          result.observe(redelivered, info.num_redelivered, attrs);
        }),
      );
    },
    [pending, ackPending, redelivered],
  );
}
