import type { IncomingHttpHeaders } from 'node:http';
import type { ContextOverflow } from './server-profiles.js';

/** Token counts to report instead of the chars/4 estimate. */
export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** An assistant message with text content; `finish_reason` is `finishReason ?? 'stop'`. */
export interface ScriptedContent {
  content: string;
  /** Reasoning, sent in the profile's reasoning field (`reasoning_content`, `reasoning`; OpenAI sends none). */
  reasoning?: string;
  usage?: ScriptedUsage;
  finishReason?: string;
  /** Added to the server's latency before this response is sent. */
  delayMs?: number;
}

/** One function call the scripted model makes. */
export interface ScriptedToolCall {
  /** Default: a generated `call_…` id. */
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent verbatim, so tests can send malformed JSON. */
  arguments: string | object;
}

/** An assistant message with tool calls (and optional text); `finish_reason` is `finishReason ?? 'tool_calls'`. */
export interface ScriptedToolCalls {
  toolCalls: ScriptedToolCall[];
  content?: string;
  reasoning?: string;
  usage?: ScriptedUsage;
  finishReason?: string;
  delayMs?: number;
}

/**
 * An HTTP error with an OpenAI-style body `{ error: { message, type, code } }`.
 * Status 429 always carries a `Retry-After` header (`retryAfterSeconds`, default 1) and
 * `type`/`code` `rate_limit_exceeded`; other statuses carry it only when `retryAfterSeconds` is set.
 */
export interface ScriptedError {
  status: number;
  message?: string;
  /** Overrides `error.code` in the body. */
  code?: string;
  retryAfterSeconds?: number;
  /** Sent as `retry-after-ms` (OpenAI, Azure OpenAI); on a 429 it replaces the default `retry-after: 1`. */
  retryAfterMs?: number;
  /** The prompt does not fit: the profile's own status, message and body for that (`status` is then ignored). */
  overflow?: ContextOverflow;
  delayMs?: number;
}

/** Never answers; the request stays open until the client aborts or the server closes (timeout tests). */
export interface ScriptedHang {
  hang: true;
}

/**
 * What the scripted model does with one chat completion request, told apart by its key:
 * - `{ content }` → a normal answer ({@link ScriptedContent})
 * - `{ toolCalls }` → tool calls ({@link ScriptedToolCalls})
 * - `{ status }` → an HTTP error, e.g. `{ status: 429, retryAfterSeconds: 2 }` or `{ status: 500 }` ({@link ScriptedError})
 * - `{ hang: true }` → no answer at all ({@link ScriptedHang})
 */
export type ScriptedResponse = ScriptedContent | ScriptedToolCalls | ScriptedError | ScriptedHang;

/** A text part of a multi-part message content. */
export interface ChatContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/** A message as sent in a chat completion request (only the fields the kit reads are typed). */
export interface ChatMessage {
  role: string;
  content?: string | ChatContentPart[] | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

/** The JSON body of a chat completion request (only the fields the kit reads are typed). */
export interface ChatRequestBody {
  model?: string;
  messages?: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  tools?: unknown[];
  [key: string]: unknown;
}

/** A chat completion request as the scripted model received it. */
export interface RecordedRequest {
  body: ChatRequestBody;
  headers: IncomingHttpHeaders;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
  /** `Date.now()` when its response ended or its client went away; undefined while it is in flight. */
  endedAt?: number;
}

/** Decides the answer when the queue is empty. */
export type Responder = (request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>;
