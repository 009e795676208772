import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ownerFields, contracts, type MemoryExtractJob, type MemoryWriteJob, type SessionMessage } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';
import { LlmError, type LlmClient } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import { MemoryError, SessionForbiddenError } from '../memory-errors.js';
import type { SessionStore } from '../session-store.js';
import { extractionMessages, parseJudgeAnswer } from './extraction-prompt.js';
import { storeCall } from './longterm-errors.js';
import type { LongTermKeys } from './longterm-keys.js';
import type { Embedder } from './embedder.js';
import { scopeOf, type SessionNames } from '../owner-scope.js';
import type { MemoryRecord, VectorStore } from './vector-store.js';

export interface ExtractorOptions {
  bus: Bus;
  redis: Redis;
  keys: LongTermKeys;
  sessions: SessionStore;
  store: VectorStore;
  embedder: Pick<Embedder, 'embed'>;
  llm: Pick<LlmClient, 'chat'>;
  logger: Logger;
  /** Resolves the job's session to the stores' id (the owner's, or one written before sessions were). */
  names: SessionNames;
  /** Memories the judge is less sure of than this are not written (MEMORY_EXTRACT_MIN_CONFIDENCE). */
  minConfidence: number;
  /** Messages judged per LLM call; a longer backlog is judged in several jobs. */
  batchMessages?: number;
  /** Held memories shown to the judge, so it can supersede them rather than repeat them. */
  relatedMemories?: number;
}

/** Another replica is extracting this session right now: retry the job later. */
export class ExtractionBusyError extends MemoryError {
  constructor(opts: { sessionId: string }) {
    super('extraction_busy', `session ${opts.sessionId} is being extracted by another replica`);
  }
}

export interface ExtractionOutcome {
  judged: number;
  proposed: number;
  accepted: number;
  invalid?: boolean;
}

// Advances the cursor only from where this run started: a stale run never moves it back.
const ADVANCE = `local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Extraction: reads the messages of a session that no run has read yet (a cursor per session),
 * shows them to an LLM judge with the user's related active memories, and queues every proposed
 * memory at or above the confidence threshold as a write job. Runs from the memory-extract work
 * queue, never on a reply path.
 */
export class Extractor {
  constructor(private readonly o: ExtractorOptions) {}

  async extract(job: MemoryExtractJob): Promise<ExtractionOutcome> {
    const { redis, keys } = this.o;
    const { session } = await this.o.names.of(job);
    const flag = keys.extracting(session);
    const token = randomBytes(8).toString('hex');
    if ((await redis.set(flag, token, 'PX', 120_000, 'NX')) === null) throw new ExtractionBusyError({ sessionId: job.session_id });
    try {
      return await this.run(job, session);
    } finally {
      await redis.eval(RELEASE, 1, flag, token).catch(() => undefined);
    }
  }

  private async run(job: MemoryExtractJob, session: string): Promise<ExtractionOutcome> {
    const { redis, keys, logger } = this.o;
    const sc = scopeOf(job);
    const start = Number((await redis.get(keys.extracted(session))) ?? 0);
    let messages: SessionMessage[];
    try {
      messages = await this.o.sessions.readFrom(sc.user, session, start);
    } catch (err) {
      // A job naming another user's session is bogus: nothing to learn, nothing to retry.
      if (err instanceof SessionForbiddenError) {
        logger.warn({ session_id: job.session_id }, 'extraction job for a session of another user dropped');
        return { judged: 0, proposed: 0, accepted: 0 };
      }
      throw err;
    }
    const batch = messages.slice(0, this.o.batchMessages ?? 40);
    const end = start + batch.length;
    const turns = batch.filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content);
    if (batch.length === 0) return { judged: 0, proposed: 0, accepted: 0 };
    const outcome = turns.some((m) => m.role === 'user') ? await this.judge(job, turns) : { judged: batch.length, proposed: 0, accepted: 0 };
    await redis.eval(ADVANCE, 1, keys.extracted(session), start, end);
    if (messages.length > batch.length) {
      // The rest of a long backlog is another job, so one job never holds the judge for long.
      await this.o.bus.publish(contracts.memoryExtract, { ...job, requested_at: new Date().toISOString() });
    }
    return outcome;
  }

  private async judge(job: MemoryExtractJob, turns: SessionMessage[]): Promise<ExtractionOutcome> {
    const held = await this.related(scopeOf(job).user, turns);
    let text: string;
    try {
      // Background work: its own share of the pool, so its backlog drains under saturation without crowding out steps.
      const answer = await this.o.llm.chat({ role: 'summarizer', priority: 0, background: true, messages: extractionMessages(held, turns) });
      text = answer.content ?? '';
    } catch (err) {
      // A retryable failure (429, 5xx, no permit) is retried by redelivery; a rejected request
      // would be rejected again, so those messages are skipped.
      if (err instanceof LlmError && !err.retryable) {
        this.o.logger.warn({ err: err.message, session_id: job.session_id }, 'extraction judge rejected the request; messages skipped');
        return { judged: turns.length, proposed: 0, accepted: 0, invalid: true };
      }
      throw err;
    }
    const parsed = parseJudgeAnswer(text);
    if (!parsed.ok) {
      this.o.logger.warn(
        { session_id: job.session_id, issues: parsed.issues, answer: text.slice(0, 500) },
        'extraction judge answered invalid JSON; nothing written',
      );
      return { judged: turns.length, proposed: 0, accepted: 0, invalid: true };
    }
    const heldIds = new Set(held.map((m) => m.memory_id));
    const heldContent = new Set(held.map((m) => normalize(m.content)));
    const createdAt = new Date().toISOString();
    const writes: MemoryWriteJob[] = [];
    parsed.answer.memories.forEach((m, index) => {
      if (m.confidence < this.o.minConfidence || heldContent.has(normalize(m.content))) return;
      // Only a memory the judge was shown can be superseded: an invented id is ignored.
      const supersedes = m.supersedes && heldIds.has(m.supersedes) ? m.supersedes : undefined;
      writes.push({
        memory_id: memoryIdFor(scopeOf(job).user, turns[0]!.message_id, index),
        ...ownerFields(job),
        type: m.type,
        content: m.content.trim(),
        confidence: m.confidence,
        created_at: createdAt,
        ...(supersedes ? { supersedes } : {}),
        source: { session_id: job.session_id, message_ids: turns.map((t) => t.message_id) },
        provenance: { kind: 'conversation', session_id: job.session_id },
      });
    });
    for (const w of writes) {
      // De-duplicated by id: a job redelivered after publishing some writes does not queue them twice.
      await this.o.bus.publish(contracts.memoryWrite, w, { msgId: w.memory_id });
    }
    this.o.logger.info({ session_id: job.session_id, proposed: parsed.answer.memories.length, accepted: writes.length }, 'memories extracted');
    return { judged: turns.length, proposed: parsed.answer.memories.length, accepted: writes.length };
  }

  /** The user's active memories closest to what the new user messages talk about. */
  private async related(userId: string, turns: SessionMessage[]): Promise<MemoryRecord[]> {
    const text = turns
      .filter((m) => m.role === 'user')
      .map((m) => m.content)
      .join('\n')
      .slice(0, 8000);
    const [vector] = await storeCall('embed', () => this.o.embedder.embed([text]));
    const hits = await storeCall('search', () => this.o.store.search(userId, vector!, this.o.relatedMemories ?? 10));
    return hits.map((h) => h.record);
  }
}

/**
 * Stable per (batch, position), the batch named by its first message's id (unique, unlike a
 * session id, which a forgotten user may use again): a re-run of the same batch writes the same ids.
 */
export function memoryIdFor(userId: string, firstMessageId: string, index: number): string {
  return `m_${createHash('sha256').update(`${userId}\0${firstMessageId}\0${index}`).digest('hex').slice(0, 24)}`;
}

function normalize(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, ' ');
}
