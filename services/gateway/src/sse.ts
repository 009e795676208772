import type { ServerResponse } from 'node:http';

/** Every 15 s, below the idle timeout of common proxies and load balancers (often 30-60 s). */
export const KEEP_ALIVE_MS = 15_000;

/**
 * One Server-Sent Events response. `signal` aborts when the client disconnects or the stream is
 * ended (by the route or by server shutdown), so whatever feeds the stream can stop.
 */
export class SseStream {
  private readonly controller = new AbortController();
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    opts: { keepAliveMs?: number } = {},
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx and similar proxies buffer responses unless told not to, which would hold events back.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    res.on('close', () => this.end());
    this.keepAlive = setInterval(() => this.comment('keep-alive'), opts.keepAliveMs ?? KEEP_ALIVE_MS);
    this.keepAlive.unref();
    // The client may have gone while the task was being looked up; 'close' will not fire again.
    if (!res.socket || res.socket.destroyed) this.end();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  /** Writes one event; resolves once the socket can take more, so a slow client slows the follower. */
  async send(event: { id?: string | number; event?: string; data: unknown }): Promise<void> {
    if (this.closed) return;
    let frame = '';
    if (event.id !== undefined) frame += `id: ${event.id}\n`;
    if (event.event !== undefined) frame += `event: ${event.event}\n`;
    // JSON.stringify never emits a raw newline, so the data fits on one `data:` line.
    frame += `data: ${JSON.stringify(event.data)}\n\n`;
    if (this.res.write(frame)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      this.res.once('drain', done);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }

  comment(text: string): void {
    if (!this.closed) this.res.write(`: ${text}\n\n`);
  }

  /** Ends the response (idempotent). */
  end(): void {
    if (this.closed) return;
    clearInterval(this.keepAlive);
    this.controller.abort();
    if (!this.res.writableEnded) this.res.end();
  }
}
