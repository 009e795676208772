import type OpenAI from 'openai';
import type { ProviderName } from './provider-profiles.js';

/** Where a detected window was read: vLLM's `/v1/models`, or Ollama's `/api/show` (Modelfile `num_ctx`, else model_info's trained length). */
export type DetectedFrom = 'max_model_len' | 'num_ctx' | 'model_info';

/** A model's window as its server reported it, and when. */
export interface DetectedWindow {
  tokens: number;
  from: DetectedFrom;
  at: string;
}

/** The servers whose window Hermes can ask for. */
export function detectsWindow(provider: ProviderName): boolean {
  return provider === 'vllm' || provider === 'ollama';
}

/**
 * Asks the server for a model's window: vLLM's `/v1/models` (`max_model_len`) or Ollama's native
 * `POST /api/show`. Undefined when the server does not say (or does not answer in `timeoutMs`).
 */
export async function detectWindow(o: {
  provider: ProviderName;
  client: OpenAI;
  fetch: typeof fetch;
  endpoint: { baseUrl: string; apiKey: string; model: string };
  timeoutMs: number;
}): Promise<DetectedWindow | undefined> {
  const at = new Date().toISOString();
  if (o.provider === 'vllm') {
    for await (const m of o.client.models.list({ timeout: o.timeoutMs })) {
      const len = (m as { max_model_len?: unknown }).max_model_len;
      if (m.id === o.endpoint.model && isWindow(len)) return { tokens: len, from: 'max_model_len', at };
    }
    return undefined;
  }
  if (o.provider !== 'ollama') return undefined;
  const res = await o.fetch(`${nativeOrigin(o.endpoint.baseUrl)}/api/show`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${o.endpoint.apiKey}` },
    body: JSON.stringify({ model: o.endpoint.model }),
    signal: AbortSignal.timeout(o.timeoutMs),
  });
  if (!res.ok) return undefined;
  const found = ollamaWindow(await res.json());
  return found ? { ...found, at } : undefined;
}

/**
 * The window of an Ollama `/api/show` answer: the Modelfile's `num_ctx` (what the server runs the
 * model with) when set, else model_info's `<architecture>.context_length`, the length the model
 * was trained for: the server may run it with less (OLLAMA_CONTEXT_LENGTH, or its default).
 */
export function ollamaWindow(show: unknown): { tokens: number; from: 'num_ctx' | 'model_info' } | undefined {
  if (typeof show !== 'object' || show === null) return undefined;
  const { parameters, model_info: info } = show as { parameters?: unknown; model_info?: unknown };
  const numCtx = typeof parameters === 'string' ? /^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters)?.[1] : undefined;
  if (numCtx !== undefined && isWindow(Number(numCtx))) return { tokens: Number(numCtx), from: 'num_ctx' };
  if (typeof info !== 'object' || info === null) return undefined;
  const fields = info as Record<string, unknown>;
  const arch = fields['general.architecture'];
  const trained = typeof arch === 'string' ? fields[`${arch}.context_length`] : Object.entries(fields).find(([k]) => k.endsWith('.context_length'))?.[1];
  return isWindow(trained) ? { tokens: trained, from: 'model_info' } : undefined;
}

/** Ollama serves its native API beside `/v1`: `http://host:11434/v1` → `http://host:11434`. */
export function nativeOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function isWindow(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n > 0;
}
