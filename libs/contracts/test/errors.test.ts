import { describe, expect, it } from 'vitest';
import { faultOf, HermesError, isCallerFault } from '@hermes/contracts';

class LibraryError extends HermesError {}

describe('faultOf', () => {
  it("splits codes into the caller's, the model's and the system's faults", () => {
    expect(['session_forbidden', 'budget_exceeded', 'input_too_large', 'cancelled'].map((code) => faultOf({ code }))).toEqual([
      'caller',
      'caller',
      'caller',
      'caller',
    ]);
    expect(['loop_detected', 'max_steps_exceeded', 'plan_invalid'].map((code) => faultOf({ code }))).toEqual(['model', 'model', 'model']);
    expect(['unavailable', 'llm_timeout', 'internal', 'a_code_nobody_knows'].map((code) => faultOf({ code }))).toEqual([
      'system',
      'system',
      'system',
      'system',
    ]);
    expect(isCallerFault({ code: 'session_forbidden' })).toBe(true);
    expect(isCallerFault({ code: 'loop_detected' })).toBe(false);
  });

  it("classes context_too_long (left after the runtime's compaction) as the model's fault: never the caller's, and not redelivered", () => {
    expect(faultOf({ code: 'context_too_long' })).toBe('model');
    expect(isCallerFault({ code: 'context_too_long' })).toBe(false);
  });
});

describe('HermesError', () => {
  it('names the subclass, keeps code and cause, and takes its fault from the code unless told', () => {
    const cause = new Error('underneath');
    const err = new LibraryError('loop_detected', 'same call again', { cause });
    expect(err).toBeInstanceOf(Error);
    expect({ name: err.name, code: err.code, fault: err.fault, message: err.message, cause: err.cause }).toEqual({
      name: 'LibraryError',
      code: 'loop_detected',
      fault: 'model',
      message: 'same call again',
      cause,
    });
    expect(new LibraryError('bad_setting', 'x', { fault: 'caller' }).fault).toBe('caller');
    expect('cause' in new LibraryError('x', 'no cause')).toBe(false);
  });
});
