import type { KV } from '@nats-io/kv';
import { DEFAULT_TEAM, ownerOf, type Owner } from '@hermes/contracts';

/** KV keys allow `[-/_=.A-Za-z0-9]`; ids may also hold `:` and `@`, escaped as `=XX`. */
const encode = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, (c) => `=${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
const decode = (key: string) => key.replace(/=([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * Two indexes beside the task state: `user.<user>.<task>` (default team, as before teams) and
 * `team.<team>.<user>.<task>` (any other) list a user's or a team's tasks without scanning
 * everyone's, and `active.<task>` names the tasks whose timers each replica loads when it starts (removed once the task's
 * terminal event is out). All are plain puts and deletes, safe to repeat from any replica.
 */
export class TaskIndex {
  constructor(private readonly kv: KV) {}

  async add(task: { task_id: string; user_id: string; team?: string; created_at: string }): Promise<void> {
    await Promise.all([
      this.kv.put(`${ownerPrefix(ownerOf(task))}.${encode(task.task_id)}`, task.created_at),
      this.kv.put(`active.${encode(task.task_id)}`, task.created_at),
    ]);
  }

  async deactivate(taskId: string): Promise<void> {
    await this.kv.delete(`active.${encode(taskId)}`);
  }

  /** Whether the task is still listed active (its end not yet announced). */
  async isActive(taskId: string): Promise<boolean> {
    const entry = await this.kv.get(`active.${encode(taskId)}`);
    return entry?.operation === 'PUT';
  }

  /** Tasks not yet ended (or whose end was not yet announced). */
  async active(): Promise<string[]> {
    return this.list('active.>', (k) => decode(k.slice('active.'.length)));
  }

  /** Ids of one user's tasks, of a team's (`{ team }`), or of every team's when null. */
  async tasksOf(who: Owner | { team: string } | null): Promise<string[]> {
    const taskOf = (k: string) => decode(k.split('.').at(-1) ?? '');
    if (who === null) return [...(await this.list('user.>', taskOf)), ...(await this.list('team.>', taskOf))];
    if (!('user_id' in who)) return this.list(who.team === DEFAULT_TEAM ? 'user.>' : `team.${who.team}.>`, taskOf);
    return this.list(`${ownerPrefix(who)}.>`, taskOf);
  }

  private async list(filter: string, idOf: (key: string) => string): Promise<string[]> {
    const out: string[] = [];
    for await (const key of await this.kv.keys(filter)) out.push(idOf(key));
    return out;
  }
}

/** Where an owner's tasks are indexed: the default team's where they were before teams. */
function ownerPrefix(owner: Owner): string {
  return owner.team === DEFAULT_TEAM ? `user.${encode(owner.user_id)}` : `team.${owner.team}.${encode(owner.user_id)}`;
}
