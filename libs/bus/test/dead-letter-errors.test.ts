import { describe, expect, it } from 'vitest';
import {
  BusError,
  errorAsWire,
  InvalidMessageError,
  isRetryable,
  OutgoingPayloadError,
  PayloadEncodingError,
  PayloadLimitError,
  RemoteError,
} from '@hermes/bus';
import { wireError } from '@hermes/contracts';

describe('isRetryable', () => {
  it('says no for errors that say so, programming errors and payloads we built wrong', () => {
    expect(isRetryable(new RemoteError(wireError('session_forbidden', 'not yours'), 'hermes.memory.session.lock'))).toBe(false);
    expect(isRetryable(Object.assign(new Error('4xx'), { retryable: false }))).toBe(false);
    for (const err of [new TypeError('x'), new RangeError('Maximum call stack size exceeded'), new ReferenceError('y'), new SyntaxError('z')])
      expect(isRetryable(err), err.name).toBe(false);
    expect(isRetryable(new OutgoingPayloadError('runtimeResults', [{ path: '/x', message: 'bad' }]))).toBe(false);
    expect(isRetryable(new InvalidMessageError('runtimeJobs', [{ path: '/x', message: 'bad' }]))).toBe(false);
  });

  it('says no for a payload over its limits or one JSON cannot encode, and passes the payload_limit error on', () => {
    const wire = wireError('payload_limit', 'too deep', { limit: 'maxDepth', path: '/a' });
    expect(isRetryable(new PayloadLimitError('memoryWrite', wire))).toBe(false);
    expect(errorAsWire(new PayloadLimitError('memoryWrite', wire))).toEqual(wire);
    expect(isRetryable(new PayloadEncodingError(new RangeError('Maximum call stack size exceeded')))).toBe(false);
  });

  it('says yes for everything else, a retryable remote error included', () => {
    expect(isRetryable(new Error('connection reset'))).toBe(true);
    expect(isRetryable(new RemoteError(wireError('unavailable', 'redis down'), 'hermes.memory.session.read'))).toBe(true);
    expect(isRetryable('a thrown string')).toBe(true);
  });
});

describe('errorAsWire', () => {
  it('passes a wire error on as it is, and describes any other error by its code (or internal) and class', () => {
    const wire = wireError('session_forbidden', 'not yours');
    expect(errorAsWire(new RemoteError(wire, 'hermes.memory.session.lock'))).toEqual(wire);
    expect(errorAsWire(new InvalidMessageError('runtimeJobs', [{ path: '/model_role', message: 'bad' }]))).toMatchObject({
      code: 'invalid_payload',
      retryable: false,
      details: { issues: [{ path: '/model_role' }] },
    });
    expect(errorAsWire(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toEqual({
      code: 'ECONNREFUSED',
      message: 'refused',
      retryable: true,
      details: { error_name: 'Error' },
    });
    expect(errorAsWire(new TypeError('x is not a function'))).toEqual({
      code: 'internal',
      message: 'x is not a function',
      retryable: false,
      details: { error_name: 'TypeError' },
    });
    expect(errorAsWire(new Error('x'.repeat(10_000))).message).toHaveLength(4000);
  });
});

describe('isRetryable by fault', () => {
  it("says no for a Hermes error that is the caller's or the model's fault, whatever else it says", () => {
    expect(isRetryable(new BusError('session_forbidden', 'not yours'))).toBe(false);
    expect(isRetryable(new BusError('loop_detected', 'the model repeats itself'))).toBe(false);
    expect(isRetryable(new BusError('no_responders', 'nobody listens'))).toBe(true);
  });
});
