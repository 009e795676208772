import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PinnedFact } from '@hermes/contracts';
import { SessionForbiddenError, SessionStoreUnavailableError } from './memory-errors.js';
import { noteSession } from './session-index.js';
import { CLAIM_OR_REFUSE, sessionKeys } from './session-keys.js';

/** A session's running summary: it stands for the first `coveredCount` messages. */
export interface RunningSummary {
  text: string;
  coveredCount: number;
  /** Stored tokens of those messages, so unsummarised tokens = session total - this. */
  coveredTokens: number;
  updatedAt: string;
}

// Save only when the summary still covers what the job started from, so two replicas that both
// summarised cannot overwrite a newer summary with an older one. KEYS: summary. ARGV: expected
// covered count, new summary JSON.
const SAVE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
local covered = 0
if current then covered = cjson.decode(current).coveredCount end
if covered ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

// KEYS: owner, pins. ARGV: user, then pin id / pin JSON pairs.
const PIN_SCRIPT = `${CLAIM_OR_REFUSE}
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
return 1`;

/** Running summaries and pinned facts of sessions, in Redis beside the messages. */
export class SummaryStore {
  constructor(private readonly o: { redis: Redis; keyPrefix: string }) {}

  async summary(sessionId: string): Promise<RunningSummary | undefined> {
    const raw = await this.call('read', () => this.o.redis.get(sessionKeys(this.o.keyPrefix, sessionId).summary));
    return raw === null ? undefined : (JSON.parse(raw) as RunningSummary);
  }

  /** Stores `next` if the stored summary still covers `expectedCovered` messages; false if another job won. */
  async saveSummary(sessionId: string, expectedCovered: number, next: RunningSummary): Promise<boolean> {
    const key = sessionKeys(this.o.keyPrefix, sessionId).summary;
    return (await this.call('summarize', () => this.o.redis.eval(SAVE_SCRIPT, 1, key, expectedCovered, JSON.stringify(next)))) === 1;
  }

  /** Pinned facts of a session, oldest first. */
  async pins(sessionId: string): Promise<PinnedFact[]> {
    const all = await this.call('read', () => this.o.redis.hvals(sessionKeys(this.o.keyPrefix, sessionId).pins));
    return all.map((raw) => JSON.parse(raw) as PinnedFact).sort((a, b) => a.pin_id.localeCompare(b.pin_id));
  }

  /** Pins facts (claiming a new session for the user); facts already pinned with the same text are skipped. */
  async pin(
    userId: string,
    sessionId: string,
    facts: readonly { kind: PinnedFact['kind']; text: string; source: PinnedFact['source'] }[],
  ): Promise<PinnedFact[]> {
    const existing = new Set((await this.pins(sessionId)).map((p) => normalise(p.text)));
    const now = new Date();
    const added: PinnedFact[] = [];
    for (const fact of facts) {
      const norm = normalise(fact.text);
      if (norm.length === 0 || existing.has(norm)) continue;
      existing.add(norm);
      // Time first, so pin ids sort in pinning order.
      const pinId = `p_${now.getTime().toString(36).padStart(9, '0')}${added.length.toString(36).padStart(2, '0')}${randomBytes(4).toString('hex')}`;
      added.push({ pin_id: pinId, kind: fact.kind, text: fact.text.trim(), source: fact.source, created_at: now.toISOString() });
    }
    const keys = sessionKeys(this.o.keyPrefix, sessionId);
    const args = added.flatMap((p) => [p.pin_id, JSON.stringify(p)]);
    const result = await this.call('pin', async () => {
      await noteSession(this.o.redis, this.o.keyPrefix, userId, sessionId, { touch: false });
      return this.o.redis.eval(PIN_SCRIPT, 2, keys.owner, keys.pins, userId, ...args);
    });
    if (result === -1) throw new SessionForbiddenError({ sessionId });
    return added;
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new SessionStoreUnavailableError({ operation }, { cause: err });
    }
  }
}

function normalise(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, ' ');
}
