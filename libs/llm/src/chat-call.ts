import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ReasoningSplitter } from './reasoning-split.js';
import { ToolCallAssembler, type AssembledToolCall } from './tool-call-assembly.js';
import { estimateUsage, type Usage } from './usage-estimate.js';

export interface ChatResult {
  /** The answer, reasoning taken out. */
  content: string | null;
  toolCalls: AssembledToolCall[];
  finishReason: string;
  model: string;
  /** Reasoning tokens are part of `output_tokens`, as the providers count them. */
  usage: Usage;
  /** Set when the server reported no usage and it was counted with the tokenizer instead. */
  usageEstimated?: true;
  /** Tokens of reasoning (the provider's figure, else counted); absent when the model did not reason. */
  reasoningTokens?: number;
  /** The reasoning text, kept only with LLM_KEEP_REASONING; never part of `content`. */
  reasoning?: string;
  /** The completion's id as the server gave it (`gen_ai.response.id`); absent when it sent none. */
  responseId?: string;
}

export interface CallOptions {
  model: string;
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  signal?: AbortSignal;
  /** When set the call streams, and each content delta (answer text only) is passed here as it arrives. */
  onDelta?: (text: string) => void;
  /** Request parameters beyond model, messages and tools (what the provider profile lets through). */
  params?: Record<string, unknown>;
  /** Ask for the usage chunk at the end of a stream (servers that reject `stream_options` say no). */
  streamUsage?: boolean;
  /** Called once, when a stream's first chunk arrives (time to first chunk). */
  onFirstChunk?: () => void;
}

/** Reasoning as the servers name it: `reasoning_content` (vLLM ≤ 0.8, DeepSeek) or `reasoning` (vLLM ≥ 0.9, Ollama). */
interface ReasoningFields {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** One chat completion, plain or streamed; both give the same ChatResult. */
export async function callChat(client: OpenAI, o: CallOptions): Promise<ChatResult> {
  const base = {
    ...o.params,
    model: o.model,
    messages: o.messages,
    // Some providers (Ollama) ignore tool_choice, so Hermes never relies on it.
    ...(o.tools?.length ? { tools: o.tools } : {}),
  };
  const reqOpts = o.signal ? { signal: o.signal } : {};
  const split = new ReasoningSplitter();
  let answer = '';
  let reasoning = '';
  let sawContent = false;
  const take = (content: string | null | undefined, fieldReasoning: string | null | undefined, onAnswer?: (t: string) => void) => {
    if (fieldReasoning) reasoning += fieldReasoning;
    if (!content) return;
    sawContent = true;
    const part = split.push(content);
    reasoning += part.reasoning;
    answer += part.answer;
    if (part.answer) onAnswer?.(part.answer);
  };
  if (!o.onDelta) {
    const completion = await client.chat.completions.create(base, reqOpts);
    const choice = completion.choices[0];
    const message = choice?.message as (NonNullable<typeof choice>['message'] & ReasoningFields) | undefined;
    take(message?.content, message?.reasoning_content ?? message?.reasoning);
    // An empty answer is still an answer (the stream's empty role delta is not).
    if (message?.content === '') sawContent = true;
    const tools = new ToolCallAssembler();
    (message?.tool_calls ?? []).forEach((c, index) => c.type === 'function' && tools.add({ index, id: c.id, function: c.function }));
    return finish(o, {
      answer,
      reasoning,
      sawContent,
      split,
      toolCalls: tools.result(),
      finishReason: choice?.finish_reason ?? 'unknown',
      model: completion.model || o.model,
      usage: completion.usage,
      id: completion.id,
    });
  }
  const streamOptions = o.streamUsage === false ? {} : { stream_options: { include_usage: true } };
  const stream = await client.chat.completions.create({ ...base, stream: true, ...streamOptions }, reqOpts);
  let finishReason = 'unknown';
  let model = o.model;
  let usage: RawUsage | undefined;
  let id: string | undefined;
  const tools = new ToolCallAssembler();
  for await (const chunk of stream) {
    if (id === undefined) o.onFirstChunk?.();
    id ??= chunk.id ?? '';
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    const delta = choice.delta as (typeof choice.delta & ReasoningFields) | undefined;
    take(delta?.content, delta?.reasoning_content ?? delta?.reasoning, o.onDelta);
    for (const d of delta?.tool_calls ?? []) tools.add(d);
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  return finish(o, { answer, reasoning, sawContent, split, toolCalls: tools.result(), finishReason, model, usage, id });
}

function finish(
  o: CallOptions,
  r: {
    answer: string;
    reasoning: string;
    sawContent: boolean;
    split: ReasoningSplitter;
    toolCalls: AssembledToolCall[];
    finishReason: string;
    model: string;
    usage: RawUsage | null | undefined;
    id?: string | undefined;
  },
): ChatResult {
  const tail = r.split.end();
  const reasoning = (r.reasoning + tail.reasoning).trim();
  let answer = r.answer + tail.answer;
  // After `</think>` the answer usually opens with blank lines that belong to neither.
  if (r.split.found) answer = answer.replace(/^\s+/, '');
  const reported = r.usage && (r.usage.prompt_tokens || r.usage.completion_tokens) ? r.usage : undefined;
  const estimated = reported ? undefined : estimateUsage({ model: r.model, messages: o.messages, tools: o.tools, answer, reasoning, toolCalls: r.toolCalls });
  const usage = estimated ?? { input_tokens: reported?.prompt_tokens ?? 0, output_tokens: reported?.completion_tokens ?? 0 };
  const reasoningTokens =
    reported?.completion_tokens_details?.reasoning_tokens ??
    (reasoning ? estimateUsage({ model: r.model, messages: [], answer: '', reasoning, toolCalls: [] }).output_tokens : undefined);
  return {
    content: r.sawContent && (answer !== '' || !reasoning) ? answer : null,
    toolCalls: r.toolCalls,
    finishReason: r.finishReason,
    model: r.model,
    usage,
    ...(estimated ? { usageEstimated: true as const } : {}),
    ...(reasoningTokens ? { reasoningTokens } : {}),
    ...(reasoning ? { reasoning } : {}),
    ...(r.id ? { responseId: r.id } : {}),
  };
}
