import type { ServerResponse } from 'node:http';
import { RemoteError } from '@hermes/bus';
import type { ValidationIssue, WireError } from '@hermes/contracts';

/** The `error` member of every non-2xx JSON response. */
export interface HttpErrorBody {
  code: string;
  message: string;
  retryable?: boolean;
  issues?: ValidationIssue[];
  details?: Record<string, unknown>;
}

/** An error answered to the HTTP caller as `{ error: body }` with this status; never a stack trace. */
export class HttpError extends Error {
  readonly code: string;
  constructor(
    readonly status: number,
    readonly body: HttpErrorBody,
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown },
  ) {
    super(body.message, options);
    this.name = new.target.name;
    this.code = body.code;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, err: HttpError): void {
  sendJson(res, err.status, { error: err.body }, err.headers);
}

/** Status for a structured error from a bus request: the caller's fault, missing data, or the system's. */
const STATUS_BY_WIRE_CODE: Record<string, number> = {
  not_found: 404,
  forbidden: 403,
  session_forbidden: 403,
  unauthorized: 401,
  invalid_payload: 400,
  no_responders: 503,
  timeout: 503,
  unavailable: 503,
  session_busy: 409,
};

/** Passes a bus-side failure on to the HTTP caller as its structured wire error. */
export function httpErrorFromRemote(err: RemoteError): HttpError {
  const status = STATUS_BY_WIRE_CODE[err.wire.code] ?? 502;
  return new HttpError(status, wireBody(err.wire), status === 503 ? { 'retry-after': '1' } : {}, { cause: err });
}

/**
 * Any failure to get an answer over the bus (a request or a JetStream publish): the system's
 * fault, retryable. Structured remote errors keep their own code and status.
 */
export function httpErrorFromBus(err: unknown): HttpError {
  if (err instanceof RemoteError) return httpErrorFromRemote(err);
  const timedOut = (err as { name?: unknown }).name === 'TimeoutError';
  return new HttpError(
    503,
    {
      code: timedOut ? 'timeout' : 'bus_unavailable',
      message: timedOut ? 'the bus did not answer in time' : 'the bus is unavailable or did not accept the message',
      retryable: true,
    },
    { 'retry-after': '1' },
    { cause: err },
  );
}

function wireBody(wire: WireError): HttpErrorBody {
  const issues = wire.details?.issues;
  return {
    code: wire.code,
    message: wire.message,
    retryable: wire.retryable,
    ...(Array.isArray(issues) ? { issues: issues as ValidationIssue[] } : {}),
  };
}
