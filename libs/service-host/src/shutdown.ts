import type { Logger } from '@hermes/telemetry';

export type ShutdownStep = { name: string; run: () => Promise<void> };

/**
 * On SIGTERM/SIGINT runs the steps in order (stop intake, finish or nak in-flight work, drain
 * the bus, close servers) and exits 0; if they take longer than `timeoutMs`, exits 1 instead of
 * hanging a rolling update. Returns the function so tests and runners can trigger it directly.
 */
export function installShutdown(opts: { logger: Logger; timeoutMs: number; steps: ShutdownStep[] }): () => Promise<void> {
  let started = false;
  const shutdown = async () => {
    if (started) return;
    started = true;
    opts.logger.info({ timeout_ms: opts.timeoutMs }, 'shutting down');
    const timer = setTimeout(() => {
      opts.logger.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, opts.timeoutMs);
    timer.unref();
    for (const step of opts.steps) {
      try {
        await step.run();
      } catch (err) {
        opts.logger.warn({ err, step: step.name }, 'shutdown step failed');
      }
    }
    opts.logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  return shutdown;
}
