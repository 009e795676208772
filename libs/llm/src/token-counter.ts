import { createRequire } from 'node:module';
import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';

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

type Tokenizer = typeof O200k;
const requireCjs = createRequire(import.meta.url);
const loaded = new Map<EncodingName, Encoding>();

/**
 * An encoding, loaded on first use: building one's rank tables costs a few hundred ms of CPU,
 * which every memory service paid for both at start-up although it mostly counts in one. Loaded
 * with require (the package ships CommonJS too) because counting is synchronous.
 */
function encodingOf(name: EncodingName): Encoding {
  let enc = loaded.get(name);
  if (!enc) {
    const t = requireCjs(`gpt-tokenizer/encoding/${name}`) as Tokenizer;
    enc = { count: (text) => t.countTokens(text, AS_TEXT), encode: (text) => t.encode(text, AS_TEXT), decode: (tokens) => t.decode(tokens) };
    loaded.set(name, enc);
  }
  return enc;
}

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
  return text.length === 0 ? 0 : encodingOf(encoding).count(text);
}

/** The first `maxTokens` tokens of `text`, decoded back to a string. */
export function headTokens(text: string, maxTokens: number, encoding: EncodingName): string {
  const enc = encodingOf(encoding);
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

/** What of a tool the model reads: its function's name, description and JSON Schema. */
export interface CountableTool {
  name: string;
  description?: string | undefined;
  parameters?: unknown;
}

/** Tokens a tool definition costs beyond its JSON (the template's wrapping of each function). */
export const TOOL_OVERHEAD_TOKENS = 8;

/**
 * Tokens the tool definitions of a request take in the prompt: each function's name, description
 * and parameter schema as the JSON the server renders into its template, plus a per-tool overhead.
 * Servers render tools in their own ways (OpenAI's TypeScript-like namespace, a chat template's
 * JSON list); the JSON is close to both, and grows with the schema as they do.
 */
export function countToolSchemas(tools: readonly CountableTool[], encoding: EncodingName): number {
  let tokens = 0;
  for (const t of tools) {
    const spec = {
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      ...(t.parameters !== undefined ? { parameters: t.parameters } : {}),
    };
    tokens += TOOL_OVERHEAD_TOKENS + countText(JSON.stringify(spec), encoding);
  }
  return tokens;
}
