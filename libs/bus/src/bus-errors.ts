import { HermesError, wireError, type WireError } from '@hermes/contracts';

/** Base class of every error the bus layer throws locally. */
export class BusError extends HermesError {}

/** A request got a structured error reply (or none at all); `wire` is what to pass on. */
export class RemoteError extends BusError {
  constructor(
    readonly wire: WireError,
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super(wire.code, `${subject}: ${wire.message}`, options);
  }
  get retryable(): boolean {
    return this.wire.retryable;
  }
}

/** Thrown by a request handler to reply with this structured error instead of `internal`. */
export class ReplyError extends BusError {
  constructor(readonly wire: WireError) {
    super(wire.code, wire.message);
  }
}

/** A payload we were about to send does not match its contract: a bug in the sender. */
export class OutgoingPayloadError extends BusError {
  constructor(
    readonly contract: string,
    readonly issues: readonly { path: string; message: string }[],
  ) {
    super('invalid_payload', `outgoing ${contract} payload is invalid: ${issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`);
  }
}

/** A payload we were about to send is over its contract's limits: a bug in the sender, or input it should have refused. */
export class PayloadLimitError extends BusError {
  /** The same payload is over the same limit every time: a work message that hits this is dead-lettered at once. */
  readonly retryable = false;
  constructor(
    readonly contract: string,
    readonly wire: WireError,
  ) {
    super('payload_limit', `outgoing ${contract} payload: ${wire.message}`);
  }
}

/** A payload cannot be written as JSON (a cycle, a BigInt, nesting that overflows JSON.stringify). */
export class PayloadEncodingError extends BusError {
  readonly retryable = false;
  constructor(cause: unknown) {
    super('invalid_payload', `payload cannot be encoded as JSON: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

// Issues kept in a dead-letter record: enough to see what is wrong, bounded however bad the message.
const MAX_ISSUES = 20;

/** A consumed message fails its contract: redelivery cannot fix it, so it is dead-lettered with `wire`. */
export class InvalidMessageError extends BusError {
  readonly retryable = false;
  readonly wire: WireError;
  /** `decodeError`: why the body could not even be decoded (a `payload_limit` keeps its own code). */
  constructor(
    readonly contract: string,
    readonly issues: readonly { path: string; message: string }[],
    decodeError?: WireError,
  ) {
    super(decodeError?.code ?? 'invalid_payload', `invalid ${contract} message: ${decodeError?.message ?? `${issues.length} problem(s)`}`);
    this.wire = decodeError
      ? { ...decodeError, message: this.message, retryable: false }
      : wireError('invalid_payload', this.message, { issues: issues.slice(0, MAX_ISSUES) });
  }
}
