import { isTerminalStatus, type TaskView } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import type { TaskStore } from './task-store.js';
import type { TaskIndex } from './task-index.js';
import { DueHeap } from './due-heap.js';
import { dueAt } from './due-times.js';

export interface TaskTimersOptions {
  store: TaskStore;
  index: TaskIndex;
  logger: Logger;
  /** DISPATCHER_TAKEOVER_MS: how long a claimed job or an ended task may sit before another replica acts for its writer. */
  takeoverMs: number;
  /** Moves a task on (PlanCoordinator.kick): its compare-and-set decides which replica's change is written. */
  kick: (taskId: string) => Promise<void>;
  /** Tasks moved at once when many fall due together. */
  concurrency?: number;
}

/** setTimeout's longest delay is about 24.8 days; a later due time is re-armed on the way. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * The dispatcher's timers: deadlines, unanswered questions, retry back-offs and work a dead
 * replica left. Every replica watches every task's writes (one KV watch on the task bucket),
 * keeps each task's next due time in a heap and moves the task when it falls due; all replicas
 * fire the same timers and the compare-and-set on the task lets one change through, so a
 * timeout happens once however many replicas run or die. Nothing is read on a schedule: the
 * active index is read once at start (and when the watch had to be reopened), to catch up on
 * what fell due while this replica was down. A paused replica's timers fire late on resume and
 * find the task already moved.
 */
export class TaskTimers {
  private readonly due = new DueHeap();
  /** The newest revision seen per task, and whether it had ended: a late read must not undo a newer write. */
  private readonly seen = new Map<string, { revision: number; ended: boolean }>();
  private timer: NodeJS.Timeout | undefined;
  private firing: Promise<void> | undefined;
  private watch: { stop: () => void } | undefined;
  private watching: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: TaskTimersOptions) {}

  /** Resolves once the watch is open and the active tasks are loaded. */
  async start(): Promise<void> {
    await this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.watch?.stop();
    await Promise.all([this.watching, this.firing]);
  }

  /** Tasks with a due time (for tests and metrics). */
  get scheduled(): number {
    return this.due.size;
  }

  private async open(): Promise<void> {
    // The watch opens before the index is read, so no write in between is missed.
    const watch = await this.o.store.watchChanges();
    this.watch = watch;
    this.watching = (async () => {
      for await (const c of watch.changes) this.note(c.taskId, c.revision, c.view);
    })()
      .catch((err: unknown) => this.o.logger.warn({ err }, 'task watch failed'))
      .then(() => this.reopen());
    await this.loadActive();
  }

  /** A watch that ended on its own (a server restart, a corrupt record): open it again and catch up. */
  private async reopen(): Promise<void> {
    if (this.stopped) return;
    await new Promise((r) => setTimeout(r, 1000).unref());
    await this.open().catch((err: unknown) => {
      this.o.logger.warn({ err }, 'task watch could not reopen; retrying');
      return this.reopen();
    });
  }

  private async loadActive(): Promise<void> {
    const ids = await this.o.index.active();
    const load = async (taskId: string) => {
      try {
        const found = await this.o.store.get(taskId);
        if (found) this.note(taskId, found.revision, found.view);
        // Listed but gone: the kick takes it off the list.
        else this.schedule(taskId, Date.now());
      } catch (err) {
        this.o.logger.warn({ err, task_id: taskId }, 'active task could not be read; it will be looked at again');
        this.schedule(taskId, Date.now() + this.o.takeoverMs);
      }
    };
    await inBatches(ids, this.o.concurrency ?? 16, load);
    this.o.logger.info({ active: ids.length, scheduled: this.due.size }, 'task timers loaded');
  }

  private note(taskId: string, revision: number, view: TaskView | undefined): void {
    const known = this.seen.get(taskId);
    if (known && known.revision >= revision) return;
    if (!view) {
      this.forget(taskId);
      return;
    }
    this.seen.set(taskId, { revision, ended: isTerminalStatus(view.status) });
    const at = dueAt(view, this.o.takeoverMs);
    if (at === undefined) this.due.delete(taskId);
    else this.schedule(taskId, at);
  }

  private forget(taskId: string): void {
    this.seen.delete(taskId);
    this.due.delete(taskId);
  }

  private schedule(taskId: string, at: number): void {
    this.due.set(taskId, at);
    this.arm();
  }

  private arm(): void {
    if (this.stopped || this.firing) return;
    if (this.timer) clearTimeout(this.timer);
    const next = this.due.peek();
    if (next === undefined) return;
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_DELAY_MS, Math.max(0, next - Date.now())));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    const keys = this.due.takeDue(Date.now());
    this.firing = inBatches(keys, this.o.concurrency ?? 16, (taskId) => this.move(taskId)).finally(() => {
      this.firing = undefined;
      this.arm();
    });
  }

  private async move(taskId: string): Promise<void> {
    const before = this.seen.get(taskId);
    try {
      await this.o.kick(taskId);
      if (before?.ended) this.forget(taskId);
      // Nothing newer seen: the kick wrote nothing (or its write is still on the way). Look again
      // later rather than at once; a write arriving meanwhile replaces this.
      else if (this.seen.get(taskId) === before) this.due.set(taskId, Date.now() + this.o.takeoverMs);
    } catch (err) {
      this.o.logger.warn({ err, task_id: taskId }, 'a due task could not be moved; it will be looked at again');
      this.due.set(taskId, Date.now() + this.o.takeoverMs);
    }
  }
}

/** Runs `fn` over `items`, at most `width` at once. */
async function inBatches<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}
