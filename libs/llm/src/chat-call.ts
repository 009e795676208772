import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

export interface ChatResult {
  content: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string;
  model: string;
  usage: { input_tokens: number; output_tokens: number };
}

export interface CallOptions {
  model: string;
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  signal?: AbortSignal;
  /** When set the call streams, and each content delta is passed here as it arrives. */
  onDelta?: (text: string) => void;
}

/** One chat completion, plain or streamed; both give the same ChatResult. */
export async function callChat(client: OpenAI, o: CallOptions): Promise<ChatResult> {
  const base = {
    model: o.model,
    messages: o.messages,
    // Some providers (Ollama) ignore tool_choice, so Hermes never relies on it.
    ...(o.tools?.length ? { tools: o.tools } : {}),
  };
  const reqOpts = o.signal ? { signal: o.signal } : {};
  if (!o.onDelta) {
    const completion = await client.chat.completions.create(base, reqOpts);
    const choice = completion.choices[0];
    return {
      content: choice?.message?.content ?? null,
      toolCalls: (choice?.message?.tool_calls ?? [])
        .filter((c) => c.type === 'function')
        .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      finishReason: choice?.finish_reason ?? 'unknown',
      model: completion.model ?? o.model,
      usage: { input_tokens: completion.usage?.prompt_tokens ?? 0, output_tokens: completion.usage?.completion_tokens ?? 0 },
    };
  }
  const stream = await client.chat.completions.create({ ...base, stream: true, stream_options: { include_usage: true } }, reqOpts);
  let content = '';
  let sawContent = false;
  let finishReason = 'unknown';
  let model = o.model;
  let usage = { input_tokens: 0, output_tokens: 0 };
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = { input_tokens: chunk.usage.prompt_tokens ?? 0, output_tokens: chunk.usage.completion_tokens ?? 0 };
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta?.content) {
      sawContent = true;
      content += choice.delta.content;
      o.onDelta(choice.delta.content);
    }
    // Tool-call arguments arrive in pieces keyed by index; concatenate them per call.
    for (const d of choice.delta?.tool_calls ?? []) {
      const c = (calls[d.index] ??= { id: '', name: '', arguments: '' });
      if (d.id) c.id = d.id;
      if (d.function?.name) c.name += d.function.name;
      if (d.function?.arguments) c.arguments += d.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  return { content: sawContent ? content : null, toolCalls: calls.filter(Boolean), finishReason, model, usage };
}
