import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

/**
 * A pool write lost its compare-and-set (or a create found the key there): JetStream API code
 * 10071, or 10164 from newer servers. libs/bus has the same check as `isCasConflict`, but this
 * package depends on nothing of ours (it is usable without the rest of Hermes), so it asks the
 * NATS client's error codes itself.
 */
export function lostCompareAndSet(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError)) return false;
  return err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown;
}
