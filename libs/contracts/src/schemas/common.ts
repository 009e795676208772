import { Type, type Static } from '@sinclair/typebox';

/** Ids that end up inside NATS subjects or Redis keys: one token, no dots or wildcards. */
export const Id = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_:@-]*$' });

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 timestamp' });

/** One problem found while validating a payload, in a form a caller (or a model) can act on. */
export const ValidationIssue = Type.Object(
  {
    path: Type.String({ description: 'JSON Pointer to the offending value ("" is the root)' }),
    message: Type.String(),
    keyword: Type.Optional(Type.String({ description: 'the JSON Schema keyword that failed' })),
  },
  { title: 'ValidationIssue', additionalProperties: false },
);
export type ValidationIssue = Static<typeof ValidationIssue>;

/** An error as it crosses the bus: data, never a thrown object or a stack trace. */
export const WireError = Type.Object(
  {
    code: Type.String({ description: 'stable, machine-readable code, e.g. "invalid_payload"' }),
    message: Type.String(),
    retryable: Type.Boolean(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'WireError', additionalProperties: false },
);
export type WireError = Static<typeof WireError>;

export const TokenUsage = Type.Object(
  {
    input_tokens: Type.Integer({ minimum: 0 }),
    output_tokens: Type.Integer({ minimum: 0 }),
  },
  { title: 'TokenUsage', additionalProperties: false },
);
export type TokenUsage = Static<typeof TokenUsage>;
