import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { wireError, type WireError } from '@hermes/contracts';
import { CUT_MARKER } from './compact-json.js';

/** A job whose opening prompt cannot be sent: refused before any LLM call (and before any permit). */
export class OpeningBudgetError extends Error {
  /** Neither over-budget nor over-window prompts get smaller on a redelivery. */
  readonly retryable = false;
  constructor(readonly wire: WireError) {
    super(wire.message);
    this.name = new.target.name;
  }
}

export interface OpeningBudgetOptions {
  /** The opening conversation; its last message is the user message with the goal and its rendered JSON. */
  messages: readonly ChatCompletionMessageParam[];
  /** The model's context window (MODEL_CONTEXT_TOKENS). */
  contextTokens: number;
  /** Kept free in the window for the answer, the tool schemas and the system prompt. */
  reserveTokens: number;
  /** The task's budget.max_tokens, counted against the whole opening (agent jobs; plan and compose jobs pass none). */
  maxTokens?: number | undefined;
}

/** Prompt size in tokens, estimated as the LLM client's permits do (4 characters a token). */
export function estimateTokens(messages: readonly ChatCompletionMessageParam[]): number {
  return Math.ceil(JSON.stringify(messages).length / 4);
}

/**
 * Throws {@link OpeningBudgetError} when the opening prompt cannot be sent:
 * - `input_too_large` when the opening user message (goal, inputs, dependency outputs) does not
 *   fit into the window less the reserves, or its JSON had to be cut. Only that message is
 *   counted: the session history before it was already fitted into the window by the memory
 *   service, and is what a long session gives up first.
 * - `budget_exceeded` when the whole opening is already more than the task's token budget.
 */
export function assertOpeningFits(opts: OpeningBudgetOptions): void {
  const opening = opts.messages.at(-1);
  const text = typeof opening?.content === 'string' ? opening.content : JSON.stringify(opening?.content ?? '');
  const windowTokens = opts.contextTokens - opts.reserveTokens;
  const inputTokens = estimateTokens(opening ? [opening] : []);
  if (text.endsWith(CUT_MARKER) || inputTokens > windowTokens) {
    throw new OpeningBudgetError(
      wireError(
        'input_too_large',
        `the task's goal and inputs (~${inputTokens} tokens) do not fit into the model's window of ${windowTokens} tokens (MODEL_CONTEXT_TOKENS less reserves)`,
        {
          estimated_tokens: inputTokens,
          window_tokens: windowTokens,
          ...(text.endsWith(CUT_MARKER) ? { cut: true } : {}),
        },
      ),
    );
  }
  if (opts.maxTokens === undefined) return;
  const estimate = estimateTokens(opts.messages);
  if (estimate > opts.maxTokens) {
    throw new OpeningBudgetError(
      wireError('budget_exceeded', `the prompt alone (~${estimate} tokens) exceeds the task budget of ${opts.maxTokens} tokens`, {
        estimated_tokens: estimate,
        max_tokens: opts.maxTokens,
      }),
    );
  }
}
