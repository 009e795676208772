import { contracts, ownerFields, ownerKey, ownerOf } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';

export interface ExtractionSchedulerOptions {
  bus: Bus;
  logger: Logger;
  /** A session's appends within this window give one extraction job, published at its end. */
  debounceMs: number;
}

/**
 * Turns appends into extraction jobs on the memory-jobs work queue, off the reply path: the append
 * is answered first, and a turn's messages (a runtime appends the goal and the answer; a chat
 * appends user and assistant turns one by one) are judged together once the window closes.
 *
 * Why the memory service and not the runtime: every writer of a session (runtime, gateway, CLI)
 * goes through sessionAppend, so nothing is missed and no other service has to know about
 * extraction. Why a durable queue for the job: the judge call is slow and may wait on the LLM
 * semaphore; a replica that dies leaves the job to another. A timer lost with its replica costs
 * nothing either: the worker reads from the session's cursor, so the next job picks those
 * messages up.
 */
export class ExtractionScheduler {
  private readonly timers = new Map<string, { owner: { user_id: string; team?: string }; sessionId: string; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(private readonly o: ExtractionSchedulerOptions) {}

  /** Called after each append (with the session's owner and id as the append named them); never throws, never waits. */
  schedule(owner: { user_id: string; team?: string }, sessionId: string): void {
    // One window per session of one owner: two teams' sessions of the same id are two sessions.
    const key = `${ownerKey(ownerOf(owner))}\u0000${sessionId}`;
    if (this.stopped || this.timers.has(key)) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      void this.publish(owner, sessionId);
    }, this.o.debounceMs);
    this.timers.set(key, { owner, sessionId, timer });
  }

  /** Publishes every job still waiting for its window (so a clean shutdown loses none). */
  async stop(): Promise<void> {
    this.stopped = true;
    const pending = [...this.timers];
    this.timers.clear();
    await Promise.all(
      pending.map(([, { owner, sessionId, timer }]) => {
        clearTimeout(timer);
        return this.publish(owner, sessionId);
      }),
    );
  }

  private async publish(owner: { user_id: string; team?: string }, sessionId: string): Promise<void> {
    try {
      await this.o.bus.publish(contracts.memoryExtract, { ...ownerFields(owner), session_id: sessionId, requested_at: new Date().toISOString() });
    } catch (err) {
      // The session's next append schedules it again; its cursor keeps these messages waiting.
      this.o.logger.warn({ err: (err as Error).message, session_id: sessionId }, 'could not queue memory extraction');
    }
  }
}
