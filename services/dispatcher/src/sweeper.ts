import type { Logger } from '@hermes/telemetry';

/** Runs `sweep` every `intervalMs`, never two at once; `stop` waits for the pass in progress. */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: { intervalMs: number; sweep: () => Promise<void>; logger: Logger }) {
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.o
        .sweep()
        .catch((err: unknown) => this.o.logger.warn({ err }, 'sweep failed'))
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, this.o.intervalMs);
    this.timer.unref();
  }
}
