/**
 * Collects token deltas and flushes them as one step event per interval, so a streamed answer
 * costs a handful of bus messages rather than one per token. Deltas of different steps are
 * never merged into one message.
 */
export class TokenStream {
  private buffer = '';
  private step = 0;
  private timer: NodeJS.Timeout | undefined;
  private sent = 0;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly o: { intervalMs: number; publish: (text: string, index: number, step: number) => Promise<void> }) {}

  push(text: string, step: number): void {
    if (step !== this.step) {
      void this.flush();
      this.step = step;
    }
    this.buffer += text;
    this.timer ??= setTimeout(() => void this.flush(), this.o.intervalMs);
  }

  /** Publishes what is buffered; resolves when everything pushed so far is on the bus. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer) {
      const text = this.buffer;
      const index = this.sent++;
      const step = this.step;
      this.buffer = '';
      this.flushing = this.flushing.then(() => this.o.publish(text, index, step));
    }
    return this.flushing;
  }
}
