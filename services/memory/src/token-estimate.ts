import type { NewSessionMessage } from '@hermes/contracts';

/**
 * A rough token count (about four characters per token for English text) covering what the
 * model reads: content plus tool call names and arguments. A later issue replaces this with the
 * model's real tokenizer; until then context budgets must leave some headroom.
 */
export function estimateTokens(message: NewSessionMessage): number {
  let chars = message.content?.length ?? 0;
  for (const call of message.tool_calls ?? []) chars += call.name.length + call.arguments.length;
  return Math.ceil(chars / 4);
}
