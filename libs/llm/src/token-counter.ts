import { countTokens as countCl100k, decode as decodeCl100k, encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k, decode as decodeO200k, encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';

/** The BPE encodings Hermes counts with. */
export type EncodingName = 'o200k_base' | 'cl100k_base';

/** Tokens every chat message costs beyond its text (role and separators), as OpenAI documents. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

interface Encoding {
  count(text: string): number;
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

// Stored text is data, not a prompt template: "<|endoftext|>" in a message is counted as plain text
// instead of making the tokenizer throw.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

const ENCODINGS: Record<EncodingName, Encoding> = {
  o200k_base: { count: (t) => countO200k(t, AS_TEXT), encode: (t) => encodeO200k(t, AS_TEXT), decode: (t) => decodeO200k(t) },
  cl100k_base: { count: (t) => countCl100k(t, AS_TEXT), encode: (t) => encodeCl100k(t, AS_TEXT), decode: (t) => decodeCl100k(t) },
};

// GPT-4 (before 4o), GPT-3.5 and the ada/3 embeddings use cl100k; everything newer uses o200k.
const CL100K_MODELS = /^(gpt-4(?!o|\.\d)|gpt-3\.5|text-embedding-(ada|3))/;

/**
 * The encoding for a model. Models outside the OpenAI families (Llama, Qwen, Mistral, ...) have
 * their own tokenizers; o200k is used for them as a close, usually slightly low, approximation.
 */
export function encodingFor(model: string): EncodingName {
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  return CL100K_MODELS.test(name) ? 'cl100k_base' : 'o200k_base';
}

/** Tokens of a text in an encoding (special-token strings in user text count as plain text). */
export function countText(text: string, encoding: EncodingName): number {
  return text.length === 0 ? 0 : ENCODINGS[encoding].count(text);
}

/** The first `maxTokens` tokens of `text`, decoded back to a string. */
export function headTokens(text: string, maxTokens: number, encoding: EncodingName): string {
  const enc = ENCODINGS[encoding];
  return enc.decode(enc.encode(text).slice(0, maxTokens));
}

/** What of a message the model reads. */
export interface CountableMessage {
  content: string | null;
  tool_calls?: readonly { name: string; arguments: string }[] | undefined;
}

/** Tokens a chat message costs: content, tool call names and arguments, and the per-message overhead. */
export function countMessage(message: CountableMessage, encoding: EncodingName): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + countText(message.content ?? '', encoding);
  for (const call of message.tool_calls ?? []) tokens += countText(call.name, encoding) + countText(call.arguments, encoding);
  return tokens;
}
