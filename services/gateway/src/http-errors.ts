import type { ServerResponse } from 'node:http';
import { OutgoingPayloadError, PayloadEncodingError, PayloadLimitError, RemoteError } from '@hermes/bus';
import {
  limitValidationIssues,
  PROBLEM_JSON,
  problemTitle,
  problemType,
  type LimitIssue,
  type ProblemDetails,
  type ValidationIssue,
  type WireError,
} from '@hermes/contracts';

/** What a handler says about a failure; answered as RFC 9457 problem details (`problemOf`). */
export interface HttpErrorBody {
  code: string;
  message: string;
  retryable?: boolean;
  issues?: ValidationIssue[];
  details?: Record<string, unknown>;
}

/** An error answered to the HTTP caller as problem details with this status; never a stack trace. */
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

/** The problem details of an error: `detail` is its message, `retryable` false unless it says so. */
export function problemOf(err: HttpError): ProblemDetails {
  const { code, message, retryable, issues, details } = err.body;
  return {
    type: problemType(code),
    title: problemTitle(code),
    status: err.status,
    detail: message,
    code,
    retryable: retryable ?? false,
    ...(issues ? { issues } : {}),
    ...(details ? { details } : {}),
  };
}

export function sendError(res: ServerResponse, err: HttpError): void {
  sendJson(res, err.status, problemOf(err), { 'content-type': `${PROBLEM_JSON}; charset=utf-8`, ...err.headers });
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
  overloaded: 503,
  session_busy: 409,
  invalid_schedule: 400,
  invalid_trigger: 400,
  duplicate_conflict: 409,
  not_waiting_for_input: 409,
};

/** A payload_limit error as the HTTP answer: 413 for size, 400 for every other limit (its details name limit and path); never retryable. */
export function httpErrorForLimit(wire: WireError, options?: { cause?: unknown }): HttpError {
  const limits = Array.isArray(wire.details?.issues) ? (wire.details.issues as LimitIssue[]) : [];
  const body = {
    code: wire.code,
    message: wire.message,
    retryable: false,
    issues: limitValidationIssues(limits),
    ...(wire.details ? { details: wire.details } : {}),
  };
  return new HttpError(wire.details?.limit === 'maxBytes' ? 413 : 400, body, {}, options);
}

/** Passes a bus-side failure on to the HTTP caller as its structured wire error. */
export function httpErrorFromRemote(err: RemoteError): HttpError {
  if (err.wire.code === 'payload_limit') return httpErrorForLimit(err.wire, { cause: err });
  const status = STATUS_BY_WIRE_CODE[err.wire.code] ?? 502;
  return new HttpError(status, wireBody(err.wire), status === 503 ? { 'retry-after': '1' } : {}, { cause: err });
}

/**
 * Any failure to get an answer over the bus (a request or a JetStream publish): the system's
 * fault, retryable. Structured remote errors keep their own code and status. A payload refused
 * before it was sent (over its contract's limits, or not encodable as JSON) is the caller's input
 * and answered 4xx: retrying it cannot help, so it must never pass for the bus being down.
 */
export function httpErrorFromBus(err: unknown): HttpError {
  if (err instanceof RemoteError) return httpErrorFromRemote(err);
  if (err instanceof PayloadLimitError) return httpErrorForLimit(err.wire, { cause: err });
  if (err instanceof PayloadEncodingError) return new HttpError(400, { code: 'invalid_payload', message: err.message, retryable: false }, {}, { cause: err });
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

/** A bus request whose failure is answered as the HTTP problem it maps to (a payload the gateway built too large stays a 500). */
export async function ask<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof OutgoingPayloadError) throw err;
    throw httpErrorFromBus(err);
  }
}
