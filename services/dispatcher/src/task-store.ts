import { KvWatchInclude, type KV, type KvEntry } from '@nats-io/kv';
import { decodeStored, StoredTask, type TaskView } from '@hermes/contracts';
import { casUpdate, isCasConflict } from '@hermes/bus';

/** One write of a task as a watch sees it. */
export interface TaskChange {
  taskId: string;
  revision: number;
  view?: TaskView;
}

/** Several dispatcher replicas write task state: every change is a compare-and-set on the KV revision. */
export class TaskStore {
  constructor(private readonly kv: KV) {}

  /** The task and its revision; throws StoredStateError when the stored task fails its schema. */
  async get(taskId: string): Promise<{ view: TaskView; revision: number } | undefined> {
    const entry = await this.kv.get(taskId);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return undefined;
    return { view: decodeTask(entry), revision: entry.revision };
  }

  /** Creates the task; returns the existing one instead when it is already there. */
  async createOrGet(view: TaskView): Promise<{ view: TaskView; created: boolean }> {
    try {
      await this.kv.create(view.task_id, JSON.stringify(view));
      return { view, created: true };
    } catch (err) {
      if (!isCasConflict(err)) throw err;
      const existing = await this.get(view.task_id);
      if (!existing) throw err;
      return { view: existing.view, created: false };
    }
  }

  /**
   * Every change of any task from now on (no initial values), in write order: `view` is undefined
   * for a deleted task. A record that fails its schema ends the iteration with StoredStateError.
   */
  async watchChanges(): Promise<{ changes: AsyncIterable<TaskChange>; stop: () => void }> {
    const watch = await this.kv.watch({ include: KvWatchInclude.UpdatesOnly });
    async function* changes(): AsyncIterable<TaskChange> {
      for await (const e of watch) {
        const live = e.operation === 'PUT' && e.length > 0;
        yield { taskId: e.key, revision: e.revision, ...(live ? { view: decodeTask(e) } : {}) };
      }
    }
    return { changes: changes(), stop: () => watch.stop() };
  }

  /**
   * Applies `change` to the current state and writes it only if nobody wrote in between;
   * on a conflict it re-reads and tries again. `change` returns undefined to leave it as is.
   */
  async update(taskId: string, change: (v: TaskView) => TaskView | undefined): Promise<TaskView | undefined> {
    const outcome = await casUpdate<TaskView>(
      this.kv,
      taskId,
      (current) => {
        const next = change(current);
        return next && { ...next, updated_at: new Date().toISOString() };
      },
      { decode: decodeTask },
    );
    return outcome.status === 'missing' ? undefined : outcome.value;
  }
}

/** A stored task as the dispatcher uses it; StoredStateError (`corrupt_state`) when it fails its schema. */
function decodeTask(entry: KvEntry): TaskView {
  // `v` is read (a later release writes it) but is no part of the view that taskGet answers.
  const { v: _version, ...view } = decodeStored(StoredTask, entry);
  return view;
}
