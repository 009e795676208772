import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './http-errors.js';

/** Headers a browser page may send: the key, JSON bodies, retries, SSE resumption and trace context. */
const ALLOWED_HEADERS = 'authorization, content-type, idempotency-key, last-event-id, traceparent, tracestate';
/** Response headers a page may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = 'location, retry-after, www-authenticate';
/** Browsers cache a preflight this long (seconds); Chromium caps it at 7200. */
const PREFLIGHT_MAX_AGE_S = 600;

export interface Cors {
  /** Adds the CORS response headers when the request's origin is allowed; nothing otherwise. */
  decorate(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Answers a preflight (OPTIONS with Access-Control-Request-Method) and returns true; false for
   * any other request. A preflight from an origin that is not allowed is refused with 403
   * `origin_not_allowed`, so the browser blocks the real request.
   */
  preflight(req: IncomingMessage, res: ServerResponse, allow: readonly string[]): boolean;
}

/**
 * CORS for an exact list of origins (no wildcards: the API takes bearer keys, and a `*` would let
 * any page that got hold of one use it). With no origins every cross-origin request is left to
 * the browser's same-origin policy, as if the gateway knew nothing of CORS.
 */
export function createCors(origins: readonly string[]): Cors {
  const allowed = new Set(origins);
  const originOf = (req: IncomingMessage) => {
    const origin = req.headers.origin;
    return typeof origin === 'string' && allowed.has(origin) ? origin : undefined;
  };
  return {
    decorate(req, res) {
      const origin = originOf(req);
      res.appendHeader('vary', 'Origin');
      if (origin === undefined) return;
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    },
    preflight(req, res, allow) {
      if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) return false;
      if (originOf(req) === undefined) {
        throw new HttpError(403, {
          code: 'origin_not_allowed',
          message: `origin ${String(req.headers.origin ?? '(none)')} may not call this API from a browser`,
        });
      }
      res.writeHead(204, {
        'access-control-allow-methods': allow.join(', '),
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
      });
      res.end();
      return true;
    },
  };
}
