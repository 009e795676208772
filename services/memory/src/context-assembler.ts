import type { ContextMessage, PinnedFact, SessionContextReply, SessionMessage } from '@hermes/contracts';
import { countMessage, countText, headTokens, type EncodingName } from '@hermes/llm';

export interface ContextInput {
  /** Messages the running summary does not cover, oldest first. */
  messages: readonly SessionMessage[];
  summary?: string | undefined;
  pins: readonly PinnedFact[];
  /** Tokens available for the whole context. */
  budget: number;
  encoding: EncodingName;
  /** Encoding of the counts stored with the messages; other encodings recount. */
  storedEncoding: EncodingName;
  /** Tool results longer than this are cut in context (the full one stays retrievable). */
  toolResultMaxTokens: number;
}

/**
 * Builds the context for one model call: the running summary and the pinned facts first (pinned
 * facts always, even over budget: dropping a user's constraint is worse than a tight fit; the
 * summary cut to at most half the room left), then the latest messages verbatim, newest first
 * until the budget is spent. A cut leaves out
 * everything older, so the conversation stays contiguous; a tool result whose call was cut off is
 * left out too, since a tool message without its assistant call is invalid for the model.
 */
export function assembleContext(input: ContextInput): SessionContextReply {
  const head: ContextMessage[] = [];
  let pinned: ContextMessage | undefined;
  if (input.pins.length > 0) {
    const lines = input.pins.map((p) => `- [${p.kind}] ${p.text}`);
    pinned = synthetic('pinned', `Pinned facts the user gave; they always apply:\n${lines.join('\n')}`, input.encoding);
  }
  // The summary may take at most half of what the pinned facts leave, so it never crowds out the latest turns.
  const summaryRoom = Math.floor((input.budget - (pinned?.tokens ?? 0)) / 2);
  const summary = input.summary ? summaryMessage(input.summary, summaryRoom, input.encoding) : undefined;
  if (summary) head.push(summary);
  if (pinned) head.push(pinned);
  let tokens = head.reduce((sum, m) => sum + m.tokens, 0);
  const tail: ContextMessage[] = [];
  let truncated = 0;
  let index = input.messages.length - 1;
  for (; index >= 0; index--) {
    const message = inContext(input.messages[index]!, input);
    if (tokens + message.tokens > input.budget) break;
    tokens += message.tokens;
    if (message.truncated) truncated += 1;
    tail.push(message);
  }
  tail.reverse();
  let dropped = index + 1;
  while (tail[0]?.role === 'tool') {
    const orphan = tail.shift()!;
    tokens -= orphan.tokens;
    if (orphan.truncated) truncated -= 1;
    dropped += 1;
  }
  return {
    messages: [...head, ...tail],
    tokens,
    budget: input.budget,
    summary_used: summary !== undefined,
    truncated_tool_results: truncated,
    dropped_messages: dropped,
  };
}

function inContext(m: SessionMessage, input: ContextInput): ContextMessage {
  const base = {
    role: m.role,
    ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}),
    ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
    message_id: m.message_id,
    kind: 'message' as const,
  };
  const tokens = input.encoding === input.storedEncoding ? m.tokens : countMessage(m, input.encoding);
  if (m.role === 'tool' && m.content !== null && tokens > input.toolResultMaxTokens) {
    const full = countText(m.content, input.encoding);
    const content = `${headTokens(m.content, input.toolResultMaxTokens, input.encoding)}\n[tool result truncated: ${input.toolResultMaxTokens} of ${full} tokens shown; the full result is message ${m.message_id}]`;
    return { ...base, content, tokens: countMessage({ content }, input.encoding), truncated: true };
  }
  return { ...base, content: m.content, tokens };
}

// A summary longer than the room left next to the pinned facts is cut rather than sent over budget.
function summaryMessage(text: string, room: number, encoding: EncodingName): ContextMessage | undefined {
  const prefix = 'Summary of the earlier conversation (older messages are not shown):\n';
  const whole = synthetic('summary', `${prefix}${text}`, encoding);
  if (whole.tokens <= room) return whole;
  const textRoom = room - countMessage({ content: `${prefix} [...]` }, encoding);
  if (textRoom < 32) return undefined;
  return synthetic('summary', `${prefix}${headTokens(text, textRoom, encoding)} [...]`, encoding);
}

function synthetic(kind: 'summary' | 'pinned', content: string, encoding: EncodingName): ContextMessage {
  return { role: 'system', content, kind, tokens: countMessage({ content }, encoding) };
}
