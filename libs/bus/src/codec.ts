import { PAYLOAD_LIMITS, decodeBoundedJson, type PayloadLimits, type WireError } from '@hermes/contracts';
import { PayloadEncodingError } from './bus-errors.js';

const encoder = new TextEncoder();

/**
 * A value as JSON bytes. JSON.stringify throws on a cycle, a BigInt or nesting deep enough to
 * overflow the stack: that is the sender's bug, so it surfaces as PayloadEncodingError rather
 * than as whatever error the transport call around it would be taken for.
 */
export function encodeJson(value: unknown): Uint8Array {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new PayloadEncodingError(err);
  }
  return encoder.encode(text);
}

export type Decoded = { ok: true; value: unknown } | { ok: false; message: string; error: WireError };

/**
 * Parses a message body as JSON within `limits` (the envelope bound every bus message meets, by
 * default) without throwing: bad input is reported, never crashes a handler. `error` is the wire
 * error to answer with: `payload_limit` naming the limit and path, or `invalid_payload`.
 */
export function decodeJson(data: Uint8Array, limits: PayloadLimits = PAYLOAD_LIMITS.envelope): Decoded {
  const decoded = decodeBoundedJson(data, limits, { what: 'body' });
  return decoded.ok ? decoded : { ok: false, message: decoded.message, error: decoded.error };
}
