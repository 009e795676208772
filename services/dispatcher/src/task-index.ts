import type { KV } from '@nats-io/kv';

/** KV keys allow `[-/_=.A-Za-z0-9]`; ids may also hold `:` and `@`, escaped as `=XX`. */
const encode = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, (c) => `=${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
const decode = (key: string) => key.replace(/=([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * Two indexes beside the task state: `user.<user>.<task>` lists a user's tasks without scanning
 * everyone's, and `active.<task>` names the tasks the sweep must watch (removed once the task's
 * terminal event is out). Both are plain puts and deletes, safe to repeat from any replica.
 */
export class TaskIndex {
  constructor(private readonly kv: KV) {}

  async add(task: { task_id: string; user_id: string; created_at: string }): Promise<void> {
    await Promise.all([
      this.kv.put(`user.${encode(task.user_id)}.${encode(task.task_id)}`, task.created_at),
      this.kv.put(`active.${encode(task.task_id)}`, task.created_at),
    ]);
  }

  async deactivate(taskId: string): Promise<void> {
    await this.kv.delete(`active.${encode(taskId)}`);
  }

  /** Tasks not yet ended (or whose end was not yet announced). */
  async active(): Promise<string[]> {
    return this.list('active.>', (k) => decode(k.slice('active.'.length)));
  }

  /** Ids of one user's tasks, or of every user's when `userId` is null. */
  async tasksOf(userId: string | null): Promise<string[]> {
    const filter = userId === null ? 'user.>' : `user.${encode(userId)}.>`;
    return this.list(filter, (k) => decode(k.split('.')[2] ?? ''));
  }

  private async list(filter: string, idOf: (key: string) => string): Promise<string[]> {
    const out: string[] = [];
    for await (const key of await this.kv.keys(filter)) out.push(idOf(key));
    return out;
  }
}
