import { JetStreamApiError, type JsMsg, type PubAck } from '@nats-io/jetstream';
import { headers as natsHeaders, NoRespondersError, TimeoutError } from '@nats-io/transport-node';
import { contracts, HermesError, wireError, type DeadLetter, type WireError } from '@hermes/contracts';
import { hermesMeter } from '@hermes/telemetry';
import type { Bus } from './bus.js';
import { BusError, OutgoingPayloadError, RemoteError } from './bus-errors.js';
import { natsHandles } from './bus.js';

// Room left in max_payload for the JSON around the body and the record's own headers (traceparent, Nats-Msg-Id).
const RECORD_OVERHEAD_BYTES = 4096;
const MAX_MESSAGE_CHARS = 4000;
const PROGRAMMING_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError];

/**
 * Whether an error says a dependency is away rather than that the work is wrong: a request nobody
 * answered (a service restarting: `no_responders`, `unavailable`), or JetStream not answering (no
 * stream leader during a cluster election, the server restarting, a request timed out on the way).
 * Retrying the same work once it is back is safe: writes are compare-and-set, publishes
 * de-duplicated by id.
 */
export function isDependencyOutage(err: unknown): boolean {
  if (err instanceof RemoteError) return isUnansweredRequest(err);
  if (err instanceof NoRespondersError || err instanceof TimeoutError) return true;
  if (err instanceof JetStreamApiError) return err.code === 503;
  // The client's JetStreamNotEnabled and status errors ("leadership change") are not exported.
  return err instanceof Error && (err.name === 'JetStreamNotEnabled' || /no responders|jetstream is not enabled|leadership change/i.test(err.message));
}

const OUTAGE_CODES: ReadonlySet<string> = new Set(['no_responders', 'unavailable', 'tool_unavailable', 'provider_unavailable']);

/** A request nobody (or nobody able) answered: it never ran, so sending it again is safe. */
export function isUnansweredRequest(err: unknown): err is RemoteError {
  return err instanceof RemoteError && OUTAGE_CODES.has(err.code);
}

/**
 * Whether delivering the message again can help. No when the error says so (`retryable ===
 * false`: wire errors, RemoteError, LlmError), when it is a programming error (TypeError,
 * RangeError — a stack overflow on a hostile payload —, ReferenceError, SyntaxError) or when we
 * built a payload that breaks its own contract: the same input fails the same way every time.
 */
export function isRetryable(err: unknown): boolean {
  // The caller's or the model's fault: the same message fails the same way on every delivery.
  if (err instanceof HermesError && err.fault !== 'system') return false;
  if (typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === false) return false;
  if (err instanceof OutgoingPayloadError) return false;
  return !PROGRAMMING_ERRORS.some((type) => err instanceof type);
}

/**
 * A thrown error as data for the dead-letter record: the wire error it carries (RemoteError,
 * ReplyError, LlmError), else its code (or `internal`), message and class name.
 */
export function errorAsWire(err: unknown): WireError {
  const e = err as { wire?: WireError; toWire?: () => WireError; code?: unknown; message?: unknown; name?: unknown } | undefined;
  if (e && typeof e === 'object') {
    if (e.wire && typeof e.wire.code === 'string') return e.wire;
    if (typeof e.toWire === 'function') return e.toWire();
  }
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = typeof e?.code === 'string' && e.code.length > 0 ? e.code : 'internal';
  const name = typeof e?.name === 'string' ? e.name : typeof err;
  return { code, message: message.slice(0, MAX_MESSAGE_CHARS), retryable: isRetryable(err), details: { error_name: name } };
}

/** The error of a delivery that came in after the bound (its handler never finished the earlier ones). */
export function deliveriesExhausted(msg: JsMsg, maxDeliveries: number): WireError {
  return wireError(
    'max_deliveries_exceeded',
    `delivered ${msg.info.deliveryCount} times, more than the bound of ${maxDeliveries}: the handler crashed or hung on the earlier deliveries`,
    { max_deliveries: maxDeliveries },
  );
}

/** Builds the record of a message given up on: where it was, why, and its headers and body for a replay. */
export function deadLetterRecord(msg: JsMsg, error: WireError, maxPayload: number): DeadLetter {
  const headers: Record<string, string[]> = {};
  for (const key of msg.headers?.keys() ?? []) headers[key] = msg.headers!.values(key);
  const record: DeadLetter = {
    stream: msg.info.stream,
    consumer: msg.info.consumer,
    stream_seq: msg.seq,
    subject: msg.subject,
    deliveries: msg.info.deliveryCount,
    error,
    dead_lettered_at: new Date().toISOString(),
    published_at: msg.time.toISOString(),
    headers,
    payload_bytes: msg.data.length,
  };
  const payload = Buffer.from(msg.data).toString('base64');
  // A body near max_payload cannot travel inside its own record; the record still says what was dropped.
  const size = Buffer.byteLength(JSON.stringify(record)) + payload.length + RECORD_OVERHEAD_BYTES;
  return size <= maxPayload ? { ...record, payload } : record;
}

/**
 * Publishes the dead-letter record of `msg` (to `<prefix>.deadletter.<stream>`, Nats-Msg-Id
 * `<stream>:<seq>` so a record published twice — a crash between publishing and terminating — is
 * stored once). Throws when JetStream did not store it; the message must then not be terminated.
 */
export async function publishDeadLetter(bus: Bus, msg: JsMsg, error: WireError): Promise<DeadLetter> {
  const record = deadLetterRecord(msg, error, natsHandles(bus).nc.info?.max_payload ?? 1024 * 1024);
  await bus.publish(contracts.deadLetters, record, { subject: bus.subjects.deadLetter(record.stream), msgId: `${record.stream}:${record.stream_seq}` });
  return record;
}

/** Terminates a message whose record is stored, and counts it. */
export function terminateDeadLetter(msg: JsMsg, error: WireError): void {
  // No reason text: nats-server 2.9 only understands a bare `+TERM` and ignores `+TERM <reason>`,
  // which would leave the message to be redelivered forever.
  msg.term();
  deadLetterCounter().add(1, {
    'messaging.system': 'nats',
    'messaging.destination.name': msg.info.stream,
    'messaging.consumer.group.name': msg.info.consumer,
    'error.type': error.code,
  });
}

/**
 * Dead-letters a message explicitly, from inside a handler that knows it can never be handled
 * (e.g. a rejected submission): publishes its record, then terminates it. The consumer's
 * `onDeadLetter` hook is not called — the caller already knows. The consumer's ack after the
 * handler returns is then a no-op. Throws (and leaves the message alone) when the record could
 * not be stored, so the handler fails and the message comes back.
 */
export async function deadLetter(bus: Bus, msg: JsMsg, error: WireError): Promise<DeadLetter> {
  const record = await publishDeadLetter(bus, msg, error);
  terminateDeadLetter(msg, error);
  return record;
}

/** Header a replayed message carries: the stream position of the message it re-drives. */
export const REPLAY_OF_HEADER = 'Hermes-Replay-Of';

/**
 * Publishes a dead letter's message again: its original body and headers, to its original
 * subject, with Nats-Msg-Id `msgId` in place of the original one (JetStream's `Nats-*` headers
 * are its own and are not copied) and `Hermes-Replay-Of: <stream>:<seq>`. Resolves with the ack;
 * `duplicate` means JetStream already holds a message with that id within its duplicate window.
 */
export async function republishDeadLetter(bus: Bus, record: DeadLetter, msgId: string): Promise<PubAck> {
  if (record.payload === undefined)
    throw new BusError(
      'payload_not_kept',
      `the dead letter of ${record.stream} seq ${record.stream_seq} kept no body (${record.payload_bytes} bytes): it cannot be replayed`,
    );
  const h = natsHeaders();
  for (const [name, values] of Object.entries(record.headers)) {
    if (name.toLowerCase().startsWith('nats-')) continue;
    for (const v of values) h.append(name, v);
  }
  h.set(REPLAY_OF_HEADER, `${record.stream}:${record.stream_seq}`);
  return natsHandles(bus).js.publish(record.subject, Buffer.from(record.payload, 'base64'), { headers: h, msgID: msgId });
}

let counter: ReturnType<ReturnType<typeof hermesMeter>['createCounter']> | undefined;
let counterMeter: ReturnType<typeof hermesMeter> | undefined;

// Made on first use, not at import: the meter must come from the provider telemetry start-up registered.
function deadLetterCounter() {
  const meter = hermesMeter();
  if (!counter || counterMeter !== meter) {
    counterMeter = meter;
    counter = meter.createCounter('hermes.bus.dead_letters', {
      unit: '{message}',
      description: 'work-queue messages dead-lettered (recorded on the dead-letter stream and terminated)',
    });
  }
  return counter;
}
