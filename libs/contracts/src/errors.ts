import type { WireError } from './schemas/common.js';

/**
 * Stable error codes that cross the bus. `retryable` is the default for the code; a producer
 * may say otherwise when it knows better.
 */
export const ERROR_CODES = {
  invalid_payload: { retryable: false, summary: 'a message failed its JSON Schema' },
  payload_limit: {
    retryable: false,
    summary:
      'a payload is over one of its limits (size, nesting depth, string length, array length, keys per object) or uses a refused key (__proto__, constructor, prototype); details name the limit, the JSON Pointer path, the maximum and the actual value',
  },
  invalid_task_event: { retryable: false, summary: 'a task submission is not a valid CloudEvent or task request' },
  unauthorized: { retryable: false, summary: 'missing or unknown credentials' },
  forbidden: { retryable: false, summary: 'the caller may not do this' },
  not_found: { retryable: false, summary: 'no such task, session, memory or tool' },
  duplicate: { retryable: false, summary: 'this submission was already received' },
  duplicate_conflict: { retryable: false, summary: 'a submission re-used the event id (or Idempotency-Key) of an existing task with a different request' },
  invalid_schedule: { retryable: false, summary: "a schedule's cron expression or time zone cannot be read, or it never fires" },
  invalid_trigger: {
    retryable: false,
    summary: "a trigger's subject filter names subjects outside the team's own events, or its condition or task placeholders cannot be read",
  },
  session_forbidden: { retryable: false, summary: 'the session belongs to another user' },
  session_busy: { retryable: true, summary: "another holder has the session's lock (one agent loop per session); retry after it is released or lapses" },
  session_lock_lost: { retryable: false, summary: 'the lock token no longer holds the session (its lease lapsed or it never did)' },
  unavailable: { retryable: true, summary: 'a dependency of the service (e.g. Redis) is down' },
  overloaded: {
    retryable: true,
    summary:
      "more work is queued than the runtimes can start within ADMISSION_MAX_WAIT_MS (or the task's own deadline): the submission was not stored; submit again after details.retry_after_ms (on the bus with a new event id)",
  },
  no_responders: { retryable: true, summary: 'no replica of the target service is listening' },
  timeout: { retryable: true, summary: 'the target service did not answer in time' },
  llm_error: { retryable: false, summary: 'the LLM provider rejected the request' },
  llm_unavailable: { retryable: true, summary: 'the LLM provider could not be reached or failed (5xx)' },
  llm_rate_limited: { retryable: true, summary: 'the LLM provider answered 429' },
  llm_timeout: { retryable: true, summary: 'the LLM call took too long' },
  context_too_long: {
    retryable: false,
    summary:
      "the prompt does not fit into the model's context window, as the LLM provider answered (details.context_tokens and details.prompt_tokens when it said them); the runtime compacts the conversation once before giving up",
  },
  llm_permit_timeout: { retryable: true, summary: 'no LLM permit was free within the wait limit (the pool is saturated or backing off)' },
  budget_exceeded: { retryable: false, summary: 'the task used up its token budget (budget.max_tokens)' },
  input_too_large: {
    retryable: false,
    summary: "the task's goal and inputs (with dependency outputs) do not fit into the model's context window; nothing was sent to the model",
  },
  max_steps_exceeded: { retryable: false, summary: 'the agent loop used its max_steps without a final answer' },
  replay_diverged: {
    retryable: false,
    summary: 'a replayed task asked the model (or a tool) something its recording does not hold: details name the step, the reason and a diff of the messages',
  },
  loop_detected: { retryable: false, summary: 'the model repeated the same tool call with the same arguments' },
  tool_unavailable: { retryable: true, summary: 'the toolbus could not be reached' },
  cancelled: { retryable: false, summary: 'the task was cancelled' },
  task_ended: { retryable: false, summary: 'the task has already ended (completed, failed or cancelled): nothing more runs for it, e.g. no tool call' },
  job_attempts_exhausted: { retryable: false, summary: 'a runtime job was redelivered too many times' },
  max_deliveries_exceeded: {
    retryable: false,
    summary:
      'a work-queue message arrived after its delivery bound (HERMES_MAX_DELIVERIES) was used up, its handler having crashed or hung on the earlier ones: dead-lettered without running it',
  },
  plan_invalid: { retryable: false, summary: 'the planner produced an invalid plan twice (schema, ids, dependencies, cycles, size or tools)' },
  review_invalid: {
    retryable: false,
    summary: 'the reviewer answered a malformed verdict twice (not accept/revise JSON, or naming subtasks the task does not have)',
  },
  plan_failed: { retryable: false, summary: 'the planning job itself failed' },
  subtask_failed: { retryable: false, summary: 'a subtask failed for good and re-planning is disabled' },
  replan_exhausted: { retryable: false, summary: 'a subtask failed after the task used up its re-plans' },
  subtask_timeout: { retryable: true, summary: 'a subtask ran longer than SUBTASK_TIMEOUT_MS' },
  task_timeout: { retryable: false, summary: 'the task ran longer than its budget.timeout_ms (or TASK_TIMEOUT_MS)' },
  corrupt_state: {
    retryable: false,
    summary: 'a stored record (checkpoint, task, tool call record, approval) does not match its schema; reading it again cannot help',
  },
  input_timeout: { retryable: false, summary: 'nobody answered the question a task asked (ask_user) within ASK_USER_TIMEOUT_MS' },
  not_waiting_for_input: { retryable: false, summary: 'the task waits for no answer (it asked nothing, was answered already, or ended)' },
  unsupported_answer: {
    retryable: false,
    summary:
      'the task requires evidence and the final answer, asked once more, still did not cite tool results by call id with fragments present in them; details.problems say what was missing',
  },
  internal: { retryable: true, summary: 'an unexpected error inside Hermes' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Builds a wire error with the code's default retryability. */
export function wireError(code: ErrorCode, message: string, details?: Record<string, unknown>, retryable?: boolean): WireError {
  return { code, message, retryable: retryable ?? ERROR_CODES[code].retryable, ...(details ? { details } : {}) };
}
