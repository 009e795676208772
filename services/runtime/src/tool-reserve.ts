import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { RuntimeJob, ToolDefinition } from '@hermes/contracts';
import { countMessage, countToolSchemas, encodingFor } from '@hermes/llm';
import { systemPrompt } from './prompt-builder.js';

/** Kept free in the context window for the model's answer. */
export const RESERVE_OUTPUT_TOKENS = 4096;

/** The tools as the chat request offers them. */
export function toolSpecs(tools: readonly ToolDefinition[]): ChatCompletionTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/**
 * Tokens an agent job's every call spends before the conversation: the system prompt and the
 * schemas of the tools it offers, counted with the model's tokenizer. Kept free in the window
 * when the session context is fitted and the opening prompt checked, instead of a constant that
 * was too much for a small window and too little for a large tool list.
 */
export function toolReserveTokens(job: RuntimeJob, tools: readonly ToolDefinition[], model: string): number {
  const encoding = encodingFor(model);
  return countMessage({ content: systemPrompt(job, tools.length > 0) }, encoding) + countToolSchemas(tools, encoding);
}
