import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-errors.js';

/** Upper bound on a request body; a task's goal and inputs fit comfortably in 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = (maxBytes: number) =>
  new HttpError(413, { code: 'payload_too_large', message: `request body exceeds ${maxBytes} bytes` });

/**
 * Reads and parses a JSON request body of at most `maxBytes`. Stops buffering as soon as the limit
 * is passed (the rest is discarded by Node once the response is sent), so a large upload costs no
 * memory. Content-Type is not enforced: `curl -d` sends form encoding by default, and the body
 * is JSON or rejected as invalid_json either way.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const text = await new Promise<string>((resolve, reject) => {
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
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
    // A client that hangs up mid-upload ends with 'close' but no 'end'; do not wait forever.
    req.once('close', () => reject(new Error('client closed the connection before the body was complete')));
  });
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, { code: 'invalid_json', message: `request body is not valid JSON: ${(err as Error).message}` });
  }
}
