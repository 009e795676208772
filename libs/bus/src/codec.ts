const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export type Decoded = { ok: true; value: unknown } | { ok: false; message: string };

/** Parses a message body as JSON without throwing: bad input is reported, never crashes a handler. */
export function decodeJson(data: Uint8Array): Decoded {
  try {
    return { ok: true, value: JSON.parse(decoder.decode(data)) };
  } catch (err) {
    return { ok: false, message: `body is not valid JSON: ${(err as Error).message}` };
  }
}
