import type { IncomingMessage } from 'node:http';
import { PAYLOAD_LIMITS, decodeBoundedJson, type PayloadLimits } from '@hermes/contracts';
import { HttpError, httpErrorForLimit } from './http-errors.js';

/** Upper bound on a request body; a task's goal and inputs fit comfortably in 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = (maxBytes: number, actual?: number) =>
  new HttpError(413, {
    code: 'payload_limit',
    message: `request body exceeds ${maxBytes} bytes`,
    retryable: false,
    details: { limit: 'maxBytes', path: '', max: maxBytes, ...(actual !== undefined ? { actual } : {}) },
  });

/**
 * Reads and parses a JSON request body of at most `maxBytes`, within `limits` (the envelope bound
 * unless the route says otherwise). Stops buffering as soon as the size is passed (the rest is
 * discarded by Node once the response is sent), so a large upload costs no memory; nesting is
 * measured before the body is parsed. Every refusal is a 4xx the caller should not retry: 413
 * for size, 400 for any other limit (naming it and the path), invalid UTF-8 or text that is not
 * JSON. Content-Type is not enforced: `curl -d` sends form encoding by default, and the body is
 * JSON or rejected as invalid_json either way.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES, limits: PayloadLimits = PAYLOAD_LIMITS.envelope): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes, declared);
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.resume();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    // A client that hangs up mid-upload ends with 'close' but no 'end'; do not wait forever.
    req.once('close', () => reject(new Error('client closed the connection before the body was complete')));
  });
  const decoded = decodeBoundedJson(body, { ...limits, maxBytes: Math.min(limits.maxBytes, maxBytes) }, { what: 'request body' });
  if (decoded.ok) return decoded.value;
  if (decoded.reason === 'limit') throw httpErrorForLimit(decoded.error);
  throw new HttpError(400, { code: 'invalid_json', message: decoded.message, retryable: false });
}
