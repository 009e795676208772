/**
 * Collects token deltas and flushes them as one step event per interval, so a streamed answer
 * costs a handful of bus messages rather than one per token.
 */
export class TokenStream {
  private buffer = '';
  private timer: NodeJS.Timeout | undefined;
  private sent = 0;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly o: { intervalMs: number; publish: (text: string, index: number) => Promise<void> }) {}

  push(text: string): void {
    this.buffer += text;
    this.timer ??= setTimeout(() => this.flush(), this.o.intervalMs);
  }

  /** Publishes what is buffered; resolves when everything pushed so far is on the bus. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer) {
      const text = this.buffer;
      const index = this.sent++;
      this.buffer = '';
      this.flushing = this.flushing.then(() => this.o.publish(text, index));
    }
    return this.flushing;
  }
}
