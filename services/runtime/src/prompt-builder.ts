import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { RuntimeJob, SessionMessage } from '@hermes/contracts';
import { renderCompactJson } from './compact-json.js';
import { evidenceInstruction } from './evidence-gate.js';

/**
 * Bound on the JSON a prompt carries (inputs, dependency outputs, planning context): about a
 * million tokens at 4 characters a token, above any worker model's window, so a rendering cut
 * here would never have fitted and fails the job with input_too_large instead of being sent.
 */
export const MAX_RENDERED_JSON_CHARS = 4_000_000;

/** What the opening needs of a session message (a stored one, or one of an assembled context). */
type HistoryMessage = Pick<SessionMessage, 'role' | 'content'> & { kind?: 'message' | 'summary' | 'pinned' };

/**
 * The system prompt carries the goal, and is sent with every call of the loop, so the model
 * keeps its aim however many tool turns pile up (goal anchoring).
 */
export function systemPrompt(job: RuntimeJob, hasTools: boolean): string {
  return [
    'You are a Hermes agent working for an internal team.',
    `Your goal, which you keep to until it is done: ${job.goal}`,
    hasTools
      ? 'Use the tools you are given when they help. Each tool result says whether it worked. When a tool fails, read why, and try another way (other arguments, another tool) rather than giving up or inventing a result.'
      : 'You have no tools for this task.',
    'Never make up data. If what you need cannot be found with your tools or in the conversation, say exactly what is missing.',
    'When you are done, answer with the final result as plain text.',
    ...(job.require_evidence ? [evidenceInstruction()] : []),
  ].join('\n');
}

/**
 * The conversation before the loop: what long-term memory recalled about the user (a system
 * message, when there is any), earlier session turns (with the session's summary and pinned
 * facts as system messages, when the memory service sent them), then the goal and its inputs.
 */
export function openingMessages(job: RuntimeJob, history: readonly HistoryMessage[], background = ''): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [];
  if (background) messages.push({ role: 'system', content: background });
  // Only plain conversational turns are replayed; earlier tasks' tool turns stay in their own checkpoints.
  for (const m of history) {
    if ((m.role === 'user' || m.role === 'assistant') && m.content) messages.push({ role: m.role, content: m.content });
    // A stored system message is an old prompt and stays out; the summary and pinned facts go in.
    else if (m.role === 'system' && m.content && (m.kind === 'summary' || m.kind === 'pinned')) messages.push({ role: 'system', content: m.content });
  }
  const inputs = job.inputs && Object.keys(job.inputs).length > 0 ? jsonSection('Inputs', job.inputs) : '';
  messages.push({ role: 'user', content: `${job.goal}${inputs}` });
  return messages;
}

/**
 * A titled block of JSON for the end of a user message, compact (see renderCompactJson) and
 * bounded by MAX_RENDERED_JSON_CHARS: a 4,000-deep object is as many bytes as it came in,
 * where pretty-printing made megabytes of indentation out of it.
 */
export function jsonSection(title: string, value: unknown): string {
  return `\n\n${title} (JSON):\n${renderCompactJson(value, { maxChars: MAX_RENDERED_JSON_CHARS }).text}`;
}
