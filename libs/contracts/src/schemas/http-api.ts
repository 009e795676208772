import { Type, type Static } from '@sinclair/typebox';
import { ValidationIssue } from './common.js';

/** The media type of every error the gateway answers (RFC 9457). */
export const PROBLEM_JSON = 'application/problem+json';

/**
 * The problem type URI of a Hermes error code. A URN, not a URL: RFC 9457 lets a type be a
 * non-resolvable URI, and clients must not dereference it; the code alone identifies the problem.
 */
export const problemType = (code: string): string => `urn:hermes:problem:${code}`;

/** A short, fixed title per code ("not_found" → "Not found"), as RFC 9457 wants one title per type. */
export const problemTitle = (code: string): string => {
  const words = code.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * An error answered by the gateway: RFC 9457 problem details (`type`, `title`, `status`,
 * `detail`) with Hermes's members: the same `code` as on the bus, `retryable`, the validation
 * `issues`, and `details` where the code has them (payload limits, the conflicting task).
 */
export const ProblemDetails = Type.Object(
  {
    type: Type.String({ description: 'problem type URI: urn:hermes:problem:<code>' }),
    title: Type.String({ description: 'short summary of the problem type (fixed per code)' }),
    status: Type.Integer({ minimum: 400, maximum: 599, description: 'the HTTP status of this response' }),
    detail: Type.String({ description: 'what went wrong this time, for a human' }),
    code: Type.String({ description: 'stable, machine-readable code, the same as on the bus (e.g. "invalid_payload", "not_found")' }),
    retryable: Type.Boolean({ description: 'whether sending the same request again may succeed' }),
    issues: Type.Optional(Type.Array(ValidationIssue, { description: 'every problem found in the request (JSON Pointer path and message)' })),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'code-specific facts (the limit and path of a payload_limit, the task of a duplicate_conflict)' })),
  },
  { title: 'ProblemDetails', additionalProperties: false },
);
export type ProblemDetails = Static<typeof ProblemDetails>;
