import type { Subscription } from '@nats-io/transport-node';
import { validate, TaskCancelledNotice } from '@hermes/contracts';
import { decodeJson, type Bus } from '@hermes/bus';

/** How long a cancellation is remembered for jobs of the task that start later on this replica. */
const REMEMBER_MS = 10 * 60_000;

/**
 * Listens for task cancellations and aborts this replica's jobs of that task: their LLM calls,
 * permit waits and tool waits end at once.
 */
export class CancellationWatch {
  private readonly active = new Map<string, Set<AbortController>>();
  private readonly cancelled = new Map<string, number>();
  private readonly sub: Subscription;

  constructor(bus: Bus) {
    this.sub = bus.subscribe(bus.subjects.taskCancelledAll, (msg) => {
      const decoded = decodeJson(msg.data);
      const notice = decoded.ok ? validate(TaskCancelledNotice, decoded.value) : undefined;
      if (notice?.ok) this.cancel(notice.value.task_id);
    });
  }

  /** A signal that aborts when the task is cancelled; call `done` when the job ends. */
  track(taskId: string): { signal: AbortSignal; done(): void } {
    const ac = new AbortController();
    if (this.isCancelled(taskId)) ac.abort(new Error(`task ${taskId} was cancelled`));
    let set = this.active.get(taskId);
    if (!set) this.active.set(taskId, (set = new Set()));
    set.add(ac);
    return {
      signal: ac.signal,
      done: () => {
        set.delete(ac);
        if (set.size === 0) this.active.delete(taskId);
      },
    };
  }

  cancel(taskId: string): void {
    const now = Date.now();
    this.cancelled.set(taskId, now);
    for (const [id, at] of this.cancelled) if (now - at > REMEMBER_MS) this.cancelled.delete(id);
    for (const ac of this.active.get(taskId) ?? []) ac.abort(new Error(`task ${taskId} was cancelled`));
  }

  private isCancelled(taskId: string): boolean {
    const at = this.cancelled.get(taskId);
    return at !== undefined && Date.now() - at <= REMEMBER_MS;
  }

  stop(): void {
    this.sub.unsubscribe();
  }
}
