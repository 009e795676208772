import { createHash } from 'node:crypto';

const PLAIN_KEY = /^[A-Za-z0-9][A-Za-z0-9_=-]*(?::[A-Za-z0-9_=-]+)*$/;

/**
 * The id of a tool call, derived from its idempotency key: `t_abc:main:3:0` becomes
 * `t_abc.main.3.0` (also its KV key); a key with other characters is hashed (`_h.<sha256>`, never
 * a plain id, since plain ids start with a letter or digit). Step events, approvals and the
 * audit all name a call by this id.
 */
export function toolCallIdFor(idempotencyKey: string): string {
  if (idempotencyKey.length <= 200 && PLAIN_KEY.test(idempotencyKey)) return idempotencyKey.replace(/:/g, '.');
  return `_h.${createHash('sha256').update(idempotencyKey).digest('hex')}`;
}
