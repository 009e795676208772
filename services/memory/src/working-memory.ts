import type { Redis } from 'ioredis';
import type { WorkingEntry, WorkingSetRequest } from '@hermes/contracts';
import { SessionStoreUnavailableError, WorkingMemoryForbiddenError } from './memory-errors.js';
import { CLAIM_OR_REFUSE } from './session-keys.js';

// KEYS: owner, entries. ARGV: user, ttl ms, then field / entry JSON pairs. Both keys expire with
// the TTL, renewed by every write: a task whose end was never reported does not keep its
// scratchpad forever.
const SET_SCRIPT = `${CLAIM_OR_REFUSE}
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`;

// KEYS: owner, entries. ARGV: user. Returns the number of entries removed, -1 for another user's task.
const CLEAR_SCRIPT = `
local owner = redis.call('GET', KEYS[1])
if owner == false then return 0 end
if owner ~= ARGV[1] then return -1 end
local n = redis.call('HLEN', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2])
return n`;

/** A task's scratchpad: entries per (subtask, key), readable by later subtasks, dropped when the task ends. */
export class WorkingMemory {
  constructor(private readonly o: { redis: Redis; keyPrefix: string; ttlMs: number }) {}

  async set(userId: string, taskId: string, entries: WorkingSetRequest['entries']): Promise<WorkingEntry[]> {
    const now = new Date().toISOString();
    const stored = entries.map((e): WorkingEntry => ({ subtask_id: e.subtask_id, key: e.key, value: e.value ?? null, updated_at: now }));
    const keys = this.keysFor(taskId);
    const args = stored.flatMap((e) => [field(e), JSON.stringify(e)]);
    const result = await this.call('working_set', () => this.o.redis.eval(SET_SCRIPT, 2, keys.owner, keys.entries, userId, this.o.ttlMs, ...args));
    if (result === -1) throw new WorkingMemoryForbiddenError({ taskId });
    return stored;
  }

  async get(userId: string, taskId: string, subtaskId?: string): Promise<WorkingEntry[]> {
    const keys = this.keysFor(taskId);
    const [owner, values] = await this.call('working_get', async () => {
      const replies = await this.o.redis.multi().get(keys.owner).hvals(keys.entries).exec();
      const failed = replies?.[0]?.[0] ?? replies?.[1]?.[0];
      if (failed) throw failed;
      return [replies?.[0]?.[1] as string | null, (replies?.[1]?.[1] ?? []) as string[]] as const;
    });
    if (owner === null) return [];
    if (owner !== userId) throw new WorkingMemoryForbiddenError({ taskId });
    return values
      .map((v) => JSON.parse(v) as WorkingEntry)
      .filter((e) => subtaskId === undefined || e.subtask_id === subtaskId)
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at) || field(a).localeCompare(field(b)));
  }

  /** Drops the task's working memory; returns how many entries it had. */
  async clear(userId: string, taskId: string): Promise<number> {
    const keys = this.keysFor(taskId);
    const result = Number(await this.call('working_clear', () => this.o.redis.eval(CLEAR_SCRIPT, 2, keys.owner, keys.entries, userId)));
    if (result === -1) throw new WorkingMemoryForbiddenError({ taskId });
    return result;
  }

  private keysFor(taskId: string): { owner: string; entries: string } {
    const base = `${this.o.keyPrefix}working:{${taskId}}`;
    return { owner: `${base}:owner`, entries: `${base}:entries` };
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation }, { cause: err });
    }
  }
}

// JSON keeps (subtask, key) pairs apart whatever characters they contain.
function field(e: Pick<WorkingEntry, 'subtask_id' | 'key'>): string {
  return JSON.stringify([e.subtask_id, e.key]);
}
