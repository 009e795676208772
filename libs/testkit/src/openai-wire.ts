import { messageText } from './responders.js';
import type { ChatRequestBody, ScriptedContent, ScriptedError, ScriptedToolCalls } from './scripted-response.js';
import type { WireTraits } from './server-profiles.js';

/** A completion decided but not yet encoded; the same plan yields the JSON body or the SSE chunks. */
export interface CompletionPlan {
  id: string;
  model: string;
  created: number;
  content: string | null;
  /** Reasoning the profile sends in its own field (a profile without one drops it). */
  reasoning: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export function planCompletion(options: {
  response: ScriptedContent | ScriptedToolCalls;
  body: ChatRequestBody;
  completionId: string;
  nextToolCallId: () => string;
}): CompletionPlan {
  const { response, body } = options;
  const toolCalls =
    'toolCalls' in response
      ? response.toolCalls.map((call) => ({
          id: call.id ?? options.nextToolCallId(),
          name: call.name,
          arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
        }))
      : [];
  const content = response.content ?? null;
  const promptChars = (body.messages ?? []).reduce(
    (sum, message) =>
      sum + messageText(message).length + (message.tool_calls ?? []).reduce((n, call) => n + call.function.name.length + call.function.arguments.length, 0),
    0,
  );
  const completionChars = (content ?? '').length + toolCalls.reduce((n, call) => n + call.name.length + call.arguments.length, 0);
  const prompt_tokens = response.usage?.prompt_tokens ?? estimateTokens(promptChars);
  const completion_tokens = response.usage?.completion_tokens ?? estimateTokens(completionChars);
  return {
    id: options.completionId,
    model: typeof body.model === 'string' ? body.model : 'scripted',
    created: Math.floor(Date.now() / 1000),
    content,
    reasoning: response.reasoning ?? null,
    toolCalls,
    finishReason: response.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  };
}

function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** A `chat.completion` object as the OpenAI API returns it (reasoning where the profile puts it). */
export function completionBody(plan: CompletionPlan, traits: WireTraits): object {
  return {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: plan.content,
          refusal: null,
          ...(traits.reasoningField && plan.reasoning !== null ? { [traits.reasoningField]: plan.reasoning } : {}),
          ...(plan.toolCalls.length > 0
            ? { tool_calls: plan.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
            : {}),
        },
        logprobs: null,
        finish_reason: plan.finishReason,
      },
    ],
    usage: plan.usage,
  };
}

/**
 * The `chat.completion.chunk` sequence for a streamed answer, in the order OpenAI sends it:
 * role, reasoning then content split into word deltas, each tool call's header then its arguments
 * in pieces (so clients must reassemble by `index`), the finish reason, and the usage chunk if
 * asked for. A profile changes what its server does differently (see server-profiles.ts).
 */
export function completionChunks(plan: CompletionPlan, askedForUsage: boolean, traits: WireTraits): object[] {
  const includeUsage = askedForUsage && traits.streamUsage;
  const chunk = (delta: object, finishReason: string | null = null): object => ({
    id: plan.id,
    object: 'chat.completion.chunk',
    created: plan.created,
    model: plan.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const chunks: object[] = [chunk({ role: 'assistant', content: plan.toolCalls.length > 0 && plan.content === null ? null : '', refusal: null })];
  const reasoningField = traits.reasoningField;
  if (reasoningField) for (const piece of splitWords(plan.reasoning ?? '')) chunks.push(chunk({ [reasoningField]: piece }));
  for (const piece of splitWords(plan.content ?? '')) chunks.push(chunk({ content: piece }));
  plan.toolCalls.forEach((call, index) => {
    if (traits.toolCallDeltas === 'whole-at-0') {
      chunks.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] }));
      return;
    }
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of splitEvenly(call.arguments, 4)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, plan.finishReason));
  if (includeUsage) {
    chunks.push({ id: plan.id, object: 'chat.completion.chunk', created: plan.created, model: plan.model, choices: [], usage: plan.usage });
  }
  return chunks;
}

function splitWords(text: string): string[] {
  if (text === '') return [];
  const words = text.match(/\s*\S+/g) ?? [text];
  const trailing = text.slice(words.join('').length);
  if (trailing !== '') words.push(trailing);
  return words;
}

function splitEvenly(text: string, parts: number): string[] {
  if (text === '') return [];
  const size = Math.ceil(text.length / parts);
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}

/** Status, headers and error body (in the profile's shape) for a scripted HTTP error. */
export function errorResponse(error: ScriptedError, traits: WireTraits): { status: number; headers: Record<string, string>; body: object } {
  if (error.overflow) {
    if (!traits.overflow) throw new Error('this profile truncates an over-long prompt silently; script an answer instead');
    const o = traits.overflow(error.overflow);
    return { status: o.status, headers: {}, body: traits.errorBody(o) };
  }
  const rateLimited = error.status === 429;
  const retryAfter = error.retryAfterSeconds ?? (rateLimited && error.retryAfterMs === undefined ? 1 : undefined);
  const headers: Record<string, string> = {
    ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
    // OpenAI and Azure OpenAI also send the delay in milliseconds.
    ...(error.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(error.retryAfterMs) }),
  };
  return {
    status: error.status,
    headers,
    body: traits.errorBody({
      status: error.status,
      message: error.message ?? (rateLimited ? 'Rate limit reached (scripted).' : `Scripted error with status ${error.status}.`),
      type: errorType(error.status),
      code: error.code ?? (rateLimited ? 'rate_limit_exceeded' : null),
    }),
  };
}

export function openAiError(error: { message: string; type: string; code: string | null }): object {
  return { error: { message: error.message, type: error.type, param: null, code: error.code } };
}

function errorType(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}
