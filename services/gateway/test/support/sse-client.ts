/** One parsed Server-Sent Events frame (comments are kept apart). */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

export interface SseConnection {
  readonly status: number;
  readonly headers: Headers;
  /** Every byte received so far, comments included. */
  readonly raw: () => string;
  /** The next event frame; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseFrame>;
  /** Resolves with all frames once the server ends the response. */
  readonly ended: Promise<SseFrame[]>;
  close(): void;
}

/** A minimal SSE client over fetch, so tests see exactly what a browser's EventSource would parse. */
export async function openSse(url: string, headers: Record<string, string>): Promise<SseConnection> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const frames: SseFrame[] = [];
  let consumed = 0;
  let raw = '';
  let wake: (() => void) | undefined;
  const ended = (async () => {
    if (!res.body) return frames;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        const text = decoder.decode(chunk as Uint8Array, { stream: true });
        raw += text;
        buffer += text;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const frame = parseFrame(block);
          if (frame) frames.push(frame);
        }
        wake?.();
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    wake?.();
    return frames;
  })();
  let done = false;
  void ended.finally(() => (done = true)).catch(() => undefined);
  return {
    status: res.status,
    headers: res.headers,
    raw: () => raw,
    ended,
    close: () => abort.abort(),
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (consumed >= frames.length) {
        if (done) throw new Error('stream ended');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('no SSE frame in time');
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(left, 100));
        });
      }
      return frames[consumed++]!;
    },
  };
}

function parseFrame(block: string): SseFrame | undefined {
  const frame: SseFrame = { data: '' };
  let hasField = false;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    hasField = true;
    if (field === 'id') frame.id = value;
    else if (field === 'event') frame.event = value;
    else if (field === 'data') frame.data += (frame.data ? '\n' : '') + value;
  }
  return hasField ? frame : undefined;
}
