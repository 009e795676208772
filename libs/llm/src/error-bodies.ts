type Fetch = typeof globalThis.fetch;

/**
 * A `fetch` that rewrites the error bodies of servers that do not answer errors as OpenAI does into
 * `{ "error": { message, type, code } }`, the only shape the openai SDK reads a message from. vLLM's
 * older `{"object":"error","message":…}` otherwise becomes "400 status code (no body)" and LM Studio's
 * `{"error":"…"}` a quoted string. Successful answers pass untouched (and unread).
 */
export function withProviderErrorBodies(fetch: Fetch): Fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (res.ok || !res.headers.get('content-type')?.includes('json')) return res;
    const text = await res.text();
    const normal = openAiErrorBody(parse(text));
    const headers = new Headers(res.headers);
    // The body may change length; the Response computes its own.
    headers.delete('content-length');
    const out = new Response(normal ? JSON.stringify(normal) : text, { status: res.status, statusText: res.statusText, headers });
    Object.defineProperty(out, 'url', { value: res.url });
    return out;
  };
}

/** The body in OpenAI's error shape, or undefined when it already is in it (or is not an object). */
export function openAiErrorBody(body: unknown): { error: Record<string, unknown> } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.error === 'object' && b.error !== null) return undefined;
  if (typeof b.error === 'string') return { error: { message: b.error } };
  // vLLM before its OpenAI-shaped errors: `code` is the HTTP status there, not an error code.
  const message = b.message ?? b.detail;
  if (typeof message !== 'string') return undefined;
  return { error: { message, type: b.type ?? null, param: b.param ?? null, code: typeof b.code === 'string' ? b.code : null } };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
