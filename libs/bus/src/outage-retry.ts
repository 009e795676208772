import type { Logger } from '@hermes/telemetry';
import { isDependencyOutage } from './dead-letter.js';

// An election on a loaded cluster takes seconds: a longer pause would add to the stall, not save work.
const MAX_DELAY_MS = 2000;

/**
 * Runs `run` again while it fails because a dependency is away (isDependencyOutage: no JetStream
 * leader during an election, the server restarting, nobody answering), with exponential back-off
 * and jitter up to `budgetMs`; any other error, or the budget spent, is thrown. For writes that
 * are safe to repeat (compare-and-set, de-duplicated publishes) whose loss would cost more than
 * the wait: a checkpoint holding an LLM answer already paid for.
 */
export async function retryThroughOutage<T>(run: () => Promise<T>, o: { budgetMs: number; logger?: Logger; what: string; context?: object }): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      const waited = Date.now() - started;
      if (!isDependencyOutage(err) || waited >= o.budgetMs) throw err;
      const delayMs = Math.min(Math.round(Math.min(MAX_DELAY_MS, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random())), o.budgetMs - waited);
      o.logger?.warn({ err, ...o.context, attempt, retry_in_ms: delayMs, waited_ms: waited }, `dependency away; ${o.what} again`);
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}
