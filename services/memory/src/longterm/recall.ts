import { ownerFields, ownerFromKey, provenanceLabel } from '@hermes/contracts';
import type { LongTermMemory, MemoryRecallReply, RecalledMemory } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import { storeCall } from './longterm-errors.js';
import type { Embedder } from './embedder.js';
import type { MemoryRecord, VectorStore } from './vector-store.js';

const DAY_MS = 86_400_000;

export interface RecallTuning {
  /** Memories scoring below this are not returned (MEMORY_RECALL_MIN_SCORE, 0.35). */
  minScore: number;
  /** Age at which a memory's recency term has halved (MEMORY_RECALL_HALF_LIFE_DAYS). */
  halfLifeDays: number;
  /** Share of the score recency can take away, 0..1 (MEMORY_RECALL_RECENCY_WEIGHT). */
  recencyWeight: number;
}

export interface RecallOptions extends RecallTuning {
  store: VectorStore;
  embedder: Pick<Embedder, 'embed'>;
  logger: Logger;
}

/**
 * score = similarity × ((1 − w) + w × 2^(−age_days / half_life_days)), age from `created_at`.
 *
 * Recency scales the similarity instead of being added to it, so an unrelated recent memory never
 * outranks a related old one, and w bounds the decay: an old memory keeps at least (1 − w) of its
 * similarity, so a preference stated a year ago is still recalled when it is clearly on topic,
 * while between two similar memories the newer one wins.
 */
export function recallScore(similarity: number, ageMs: number, t: Pick<RecallTuning, 'halfLifeDays' | 'recencyWeight'>): number {
  const decay = Math.pow(2, -Math.max(0, ageMs) / (t.halfLifeDays * DAY_MS));
  return similarity * (1 - t.recencyWeight + t.recencyWeight * decay);
}

/**
 * The memories as a block for a prompt: each with the date it was learnt, its confidence and, when
 * known, where it came from (a memory planted by a tool result says so, so the model can weigh it).
 */
export function renderBackground(memories: readonly LongTermMemory[]): string {
  if (memories.length === 0) return '';
  const lines = memories.map(
    (m) =>
      `- (${m.created_at.slice(0, 10)}, ${m.type}, confidence ${m.confidence.toFixed(2)}${m.provenance ? `, from ${provenanceLabel(m.provenance)}` : ''}) ${m.content}`,
  );
  return [
    'Background: what you remember about this user from earlier conversations. It may be out of date; what the user says in this conversation takes precedence.',
    ...lines,
  ].join('\n');
}

/** Strips store-internal fields: what crosses the bus is exactly the contract's LongTermMemory. */
export function toWireMemory(r: MemoryRecord): LongTermMemory {
  return {
    memory_id: r.memory_id,
    // The store holds the owner key; the wire, the user id and (outside the default team) its team.
    ...ownerFields(ownerFromKey(r.user_id)),
    type: r.type,
    content: r.content,
    confidence: r.confidence,
    status: r.status,
    created_at: r.created_at,
    updated_at: r.updated_at,
    ...(r.last_recalled_at ? { last_recalled_at: r.last_recalled_at } : {}),
    ...(r.superseded_by ? { superseded_by: r.superseded_by } : {}),
    ...(r.source ? { source: r.source } : {}),
    ...(r.provenance ? { provenance: r.provenance } : {}),
  };
}

/**
 * Recall: a user's active memories closest to a query. The store only ever searches the given
 * user's namespace; the candidates (more than k, since recency re-orders them) are scored, cut
 * at the minimum score, and stamped `last_recalled_at` (which keeps them out of archival).
 */
export class Recall {
  constructor(private readonly o: RecallOptions) {}

  async recall(userId: string, query: string, opts: { k?: number; minScore?: number; now?: number } = {}): Promise<MemoryRecallReply> {
    const k = opts.k ?? 5;
    const minScore = opts.minScore ?? this.o.minScore;
    const now = opts.now ?? Date.now();
    const [vector] = await storeCall('embed', () => this.o.embedder.embed([query]));
    const hits = await storeCall('search', () => this.o.store.search(userId, vector!, Math.max(4 * k, 20)));
    const scored: RecalledMemory[] = hits
      // The store returns only active records; the check keeps that promise even if one does not.
      .filter((h) => h.record.status === 'active' && h.record.user_id === userId)
      .map((h) => ({
        memory: toWireMemory(h.record),
        similarity: h.similarity,
        score: recallScore(h.similarity, now - Date.parse(h.record.created_at), this.o),
      }))
      .filter((m) => m.score >= minScore)
      .sort((a, b) => b.score - a.score)
      .slice(0, k);
    const at = new Date(now).toISOString();
    // Not awaited: a durable store syncs each write, which would add to every prompt's latency,
    // and a missed stamp only lets a memory be archived sooner (it can be restored).
    void this.stampRecalled(userId, scored, at);
    scored.forEach((m) => (m.memory.last_recalled_at = at));
    return { memories: scored, background: renderBackground(scored.map((m) => m.memory)) };
  }

  private async stampRecalled(userId: string, recalled: RecalledMemory[], at: string): Promise<void> {
    const ids = recalled.map((m) => m.memory.memory_id);
    const results = await Promise.allSettled(ids.map((id) => this.o.store.update(userId, id, { last_recalled_at: at })));
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed > 0) this.o.logger.warn({ user_id: userId, failed }, 'could not record last_recalled_at');
  }
}
