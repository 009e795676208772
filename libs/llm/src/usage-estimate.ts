import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { countMessage, countText, encodingFor } from './token-counter.js';
import type { AssembledToolCall } from './tool-call-assembly.js';

/** Token usage of one call as the pools and budgets count it. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/**
 * Usage counted with the tokenizer, for an answer that came without any (a server that ignores
 * `stream_options.include_usage`, ollama/ollama#4448, or a proxy that drops the last chunk).
 * Budgets and TPM accounting would otherwise see nothing; the result is marked estimated.
 */
export function estimateUsage(o: {
  model: string;
  messages: readonly ChatCompletionMessageParam[];
  tools?: readonly ChatCompletionTool[] | undefined;
  answer: string;
  reasoning: string;
  toolCalls: readonly AssembledToolCall[];
}): Usage {
  const enc = encodingFor(o.model);
  let input = o.tools?.length ? countText(JSON.stringify(o.tools), enc) : 0;
  for (const m of o.messages) input += countMessage({ content: messageText(m), tool_calls: callsOf(m) }, enc);
  const output =
    countText(o.answer, enc) + countText(o.reasoning, enc) + o.toolCalls.reduce((n, c) => n + countText(c.name, enc) + countText(c.arguments, enc), 0);
  return { input_tokens: input, output_tokens: output };
}

function messageText(m: ChatCompletionMessageParam): string {
  const c = m.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c.map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join('');
}

function callsOf(m: ChatCompletionMessageParam): { name: string; arguments: string }[] {
  if (m.role !== 'assistant') return [];
  return (m.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ name: c.function.name, arguments: c.function.arguments }] : []));
}
