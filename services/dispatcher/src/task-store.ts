import type { KV } from '@nats-io/kv';
import { validate, TaskView } from '@hermes/contracts';

/** Several dispatcher replicas write task state: every change is a compare-and-set on the KV revision. */
export class TaskStore {
  constructor(private readonly kv: KV) {}

  async get(taskId: string): Promise<{ view: TaskView; revision: number } | undefined> {
    const entry = await this.kv.get(taskId);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return undefined;
    const checked = validate(TaskView, entry.json());
    if (!checked.ok) throw new Error(`task ${taskId} in KV does not match TaskView: ${JSON.stringify(checked.issues)}`);
    return { view: checked.value, revision: entry.revision };
  }

  /** Creates the task; returns the existing one instead when it is already there. */
  async createOrGet(view: TaskView): Promise<{ view: TaskView; created: boolean }> {
    try {
      await this.kv.create(view.task_id, JSON.stringify(view));
      return { view, created: true };
    } catch (err) {
      const existing = await this.get(view.task_id);
      if (!existing) throw err;
      return { view: existing.view, created: false };
    }
  }

  /**
   * Applies `change` to the current state and writes it only if nobody wrote in between;
   * on a conflict it re-reads and tries again. `change` returns undefined to leave it as is.
   */
  async update(taskId: string, change: (v: TaskView) => TaskView | undefined): Promise<TaskView | undefined> {
    for (let i = 0; i < 20; i++) {
      const current = await this.get(taskId);
      if (!current) return undefined;
      const next = change(current.view);
      if (!next) return current.view;
      const stored = { ...next, updated_at: new Date().toISOString() };
      try {
        await this.kv.update(taskId, JSON.stringify(stored), current.revision);
        return stored;
      } catch (err) {
        if (!/wrong last sequence/i.test((err as Error).message)) throw err;
      }
    }
    throw new Error(`task ${taskId}: too many concurrent updates`);
  }
}
