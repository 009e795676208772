import type { WireError } from './schemas/common.js';

/**
 * Whose fault an error is, which decides what happens next: the caller's (bad input: answer with
 * the error, never retry nor re-plan), the model's (its output broke a rule: tell it, or re-plan),
 * or the system's (an outage or a bug: retry only when the error says it is retryable).
 */
export type Fault = 'caller' | 'model' | 'system';

/**
 * Refusals caused by who asked or what was asked: running the same request again, or a re-plan
 * of it, cannot succeed, so the task ends with this error as it is.
 */
const CALLER_FAULTS: ReadonlySet<string> = new Set([
  'invalid_payload',
  'invalid_task_event',
  'unauthorized',
  'forbidden',
  'session_forbidden',
  'tool_forbidden',
  'budget_exceeded',
  'input_too_large',
  'payload_too_large',
  'duplicate_conflict',
  'invalid_schedule',
  'invalid_trigger',
  'cancelled',
  'input_timeout',
  'not_waiting_for_input',
  // The replay asked for what its recording does not hold: running it again diverges the same way.
  'replay_diverged',
]);

/** Whether an error is the caller's fault (see CALLER_FAULTS): never retried nor re-planned. */
export function isCallerFault(error: Pick<WireError, 'code'>): boolean {
  return CALLER_FAULTS.has(error.code);
}

/** Errors the model's own output caused: running the same job again repeats them; a re-plan may not. */
// context_too_long reaches a task only after the runtime compacted the conversation and it still
// did not fit: the loop's own turns (the model's tool calls and their results) outgrew the window,
// since an opening that does not fit is refused as input_too_large first. A smaller plan can help.
const MODEL_FAULTS: ReadonlySet<string> = new Set([
  'loop_detected',
  'max_steps_exceeded',
  'plan_invalid',
  'review_invalid',
  'context_too_long',
  'unsupported_answer',
]);

/** Whose fault an error with this code is (unknown codes are the system's). */
export function faultOf(error: Pick<WireError, 'code'>): Fault {
  if (CALLER_FAULTS.has(error.code)) return 'caller';
  return MODEL_FAULTS.has(error.code) ? 'model' : 'system';
}
