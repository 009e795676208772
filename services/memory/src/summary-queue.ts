import type { Logger } from '@hermes/telemetry';
import type { SessionStore } from './session-store.js';
import type { Summarizer } from './summarizer.js';
import type { SummaryStore } from './summary-store.js';

export interface SummaryQueueOptions {
  store: SessionStore;
  summaries: SummaryStore;
  summarizer: Summarizer;
  logger: Logger;
  /** Unsummarised stored tokens at which a session gets a summary job. */
  triggerTokens: number;
  /** Several appends in a row give one job: it starts this long after the first. */
  debounceMs?: number;
}

/**
 * Background summary jobs, off the request path: appends and context requests call `consider`,
 * which returns at once; sessions whose unsummarised history passed the threshold are summarised
 * one at a time, each once however often it was considered meanwhile.
 *
 * In-process rather than a JetStream work queue: whether a session needs a summary is derived
 * from stored state on every append and context request, so a job lost with its replica is
 * simply queued again by the next request; a durable queue would add a stream and a consumer
 * without saving any work. Replicas never summarise one session at once (Redis flag in Summarizer).
 */
export class SummaryQueue {
  private readonly pending = new Map<string, string>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: SummaryQueueOptions) {}

  /** Queues a summary of the session if its unsummarised history passed the threshold. Never throws. */
  consider(userId: string, sessionId: string): void {
    if (this.stopped || this.pending.has(sessionId)) return;
    void this.needsSummary(sessionId).then(
      (needed) => {
        if (!needed || this.stopped || this.pending.has(sessionId)) return;
        this.pending.set(sessionId, userId);
        this.running ??= this.drain();
      },
      (err: unknown) => this.o.logger.warn({ err: (err as Error).message, session_id: sessionId }, 'could not check whether the session needs a summary'),
    );
  }

  /** Waits for queued jobs to finish (tests, shutdown) — after stop(), only the one running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pending.clear();
    await this.idle();
  }

  private async needsSummary(sessionId: string): Promise<boolean> {
    const [total, summary] = await Promise.all([this.o.store.totalTokens(sessionId), this.o.summaries.summary(sessionId)]);
    return total - (summary?.coveredTokens ?? 0) >= this.o.triggerTokens;
  }

  private async drain(): Promise<void> {
    try {
      await new Promise((resolve) => setTimeout(resolve, this.o.debounceMs ?? 200));
      for (const [sessionId, userId] of this.pending) {
        this.pending.delete(sessionId);
        try {
          const result = await this.o.summarizer.summarize(userId, sessionId);
          this.o.logger.info(
            { session_id: sessionId, folded: result.folded_messages, covered: result.covered_messages, pins_added: result.pins_added },
            'session summary updated',
          );
        } catch (err) {
          // The next append or context request queues it again.
          this.o.logger.warn({ err: (err as Error).message, session_id: sessionId }, 'session summary failed');
        }
      }
    } finally {
      this.running = undefined;
    }
  }
}
