// Calls the gateway's API with the key kept in sessionStorage (never in the URL).
const KEY = 'hermes.apiKey';

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string): void => sessionStorage.setItem(KEY, key),
  clear: (): void => sessionStorage.removeItem(KEY),
};

/** An error answer of the API: RFC 9457 problem details with Hermes's code. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'ApiProblem';
  }
}

/** How the pages show an error: the problem's code and detail. */
export const problemText = (err: unknown): string => (err instanceof ApiProblem ? `${err.code}: ${err.message}` : String(err));

/** `run`, with its failure shown in `error` (and `error` emptied once it succeeds). */
export function guarded(error: Element, run: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await run();
      error.replaceChildren();
    } catch (err) {
      error.replaceChildren(problemText(err));
    }
  };
}

/** Runs `load` now and every `ms` until the returned stop is called: pages without a change stream of their own. */
export function polled(load: () => Promise<void>, ms = 2000): () => void {
  void load();
  const timer = setInterval(() => void load(), ms);
  return () => clearInterval(timer);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = apiKey.get();
  return { ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra };
}

/** A JSON request; an error answer is thrown as ApiProblem. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new ApiProblem(res.status, String(json.code ?? 'error'), String(json.detail ?? res.statusText));
  return json as T;
}

/**
 * Follows a Server-Sent Events response with fetch (EventSource cannot send the Authorization
 * header). Calls `onEvent` per event until the stream ends or `signal` aborts.
 */
export async function follow(path: string, signal: AbortSignal, onEvent: (event: string, data: unknown, id?: string) => void): Promise<void> {
  const res = await fetch(path, { headers: headers({ accept: 'text/event-stream' }), signal });
  if (res.status === 204) return;
  if (!res.ok || !res.body) {
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    throw new ApiProblem(res.status, String(json.code ?? 'error'), String(json.detail ?? res.statusText));
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = 'message';
      let data = '';
      let id: string | undefined;
      for (const line of frame.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
        else if (line.startsWith('id: ')) id = line.slice(4);
      }
      if (data) onEvent(event, JSON.parse(data), id);
    }
  }
}
