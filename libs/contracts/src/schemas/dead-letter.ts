import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, WireError } from './common.js';

/**
 * A work-queue message Hermes gave up on: terminated after its delivery bound or a non-retryable
 * error, and kept here with everything needed to look at it and publish it again.
 */
export const DeadLetter = Type.Object(
  {
    stream: Type.String({ minLength: 1, description: 'the work-queue stream the message was in, e.g. HERMES_TASK_SUBMIT' }),
    consumer: Type.String({ minLength: 1, description: 'the durable consumer that gave up on it, e.g. dispatcher-intake' }),
    stream_seq: Type.Integer({ minimum: 1, description: "the message's sequence in that stream" }),
    subject: Type.String({ minLength: 1, description: 'the subject it was published to (where a replay publishes it again)' }),
    deliveries: Type.Integer({ minimum: 1, description: 'how often JetStream delivered it, the last delivery included' }),
    error: WireError,
    dead_lettered_at: Timestamp,
    published_at: Type.Optional(Timestamp),
    headers: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: 'the original NATS headers (Nats-Msg-Id, ce-*, traceparent, ...), each with all its values',
    }),
    payload: Type.Optional(
      Type.String({
        contentEncoding: 'base64',
        description: 'the original body, base64; absent when the record would have exceeded the server max_payload (payload_bytes still says how big it was)',
      }),
    ),
    payload_bytes: Type.Integer({ minimum: 0, description: 'size of the original body in bytes' }),
  },
  { title: 'DeadLetter', additionalProperties: false },
);
export type DeadLetter = Static<typeof DeadLetter>;
