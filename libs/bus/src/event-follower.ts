import { DeliverPolicy } from '@nats-io/jetstream';
import type { Bus } from './bus.js';
import { decodeJson } from './codec.js';
import { natsHandles } from './bus.js';

export interface FollowedMessage {
  /** Stream sequence: a stable position to resume from (used as the SSE event id). */
  seq: number;
  subject: string;
  value: unknown;
}

/**
 * Replays every message stored on `subject`, then follows new ones, in order, until the
 * signal aborts or `until` returns true for a message. Built on an ordered consumer, which
 * re-creates itself after a server restart without losing its place.
 */
export async function* followSubject(
  bus: Bus,
  opts: { stream: string; subject: string; afterSeq?: number; signal?: AbortSignal; until?: (value: unknown) => boolean },
): AsyncGenerator<FollowedMessage> {
  const consumer = await natsHandles(bus).js.consumers.get(opts.stream, {
    filter_subjects: opts.subject,
    ...(opts.afterSeq ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: opts.afterSeq + 1 } : { deliver_policy: DeliverPolicy.All }),
  });
  // Pulls that expire after 5 s (heartbeats every 2.5 s): a follower notices a NATS restart, and
  // re-creates its consumer, within seconds; with the 30 s default an SSE stream went quiet for
  // about 40 s after one.
  const messages = await consumer.consume({ max_messages: 256, expires: 5_000 });
  const onAbort = () => messages.stop();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (opts.signal?.aborted) return;
    for await (const m of messages) {
      const decoded = decodeJson(m.data);
      const value = decoded.ok ? decoded.value : { undecodable: decoded.message };
      yield { seq: m.seq, subject: m.subject, value };
      if (opts.until?.(value)) break;
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    messages.stop();
    // Ordered consumers otherwise linger on the server (5 min) after every SSE client leaves.
    await consumer.delete().catch(() => false);
  }
}
