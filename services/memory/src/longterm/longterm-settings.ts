import { Type, type Static } from '@sinclair/typebox';
import type { LongTermTuning } from './longterm-memory.js';

const DAY_MS = 86_400_000;

/** Settings of extraction, recall and archival; spread into the memory service's settings. */
export const longTermSettings = {
  MEMORY_EXTRACT_MIN_CONFIDENCE: Type.Number({
    default: 0.7,
    minimum: 0,
    maximum: 1,
    description: 'extracted memories the judge is less sure of than this are not written',
  }),
  MEMORY_EXTRACT_DEBOUNCE_MS: Type.Integer({
    default: 5000,
    minimum: 0,
    description: "a session's appends within this window are judged together, in one extraction job",
  }),
  MEMORY_EXTRACT_CONCURRENCY: Type.Integer({
    default: 128,
    minimum: 1,
    description:
      "extraction jobs one memory replica runs at once; each waits for a background LLM permit, so the LLM background shares (LLM_BACKGROUND_MIN_SHARE / MAX_SHARE) are what bounds their calls. Below a pool's background share × its capacity the backlog drains no faster than this many at a time",
  }),
  MEMORY_RECALL_MIN_SCORE: Type.Number({
    default: 0.35,
    minimum: 0,
    maximum: 1,
    description: 'recall leaves out memories scoring below this (a request may ask otherwise)',
  }),
  MEMORY_RECALL_HALF_LIFE_DAYS: Type.Number({
    default: 30,
    exclusiveMinimum: 0,
    description: "age at which a memory's recency term in the recall score has halved",
  }),
  MEMORY_RECALL_RECENCY_WEIGHT: Type.Number({
    default: 0.3,
    minimum: 0,
    maximum: 1,
    description: 'share of the recall score recency can take away (0: similarity only)',
  }),
  MEMORY_ARCHIVE_AFTER_MS: Type.Integer({
    default: 90 * DAY_MS,
    minimum: 60_000,
    description: 'active memories not recalled (or written) for this long move to cold storage',
  }),
  MEMORY_ARCHIVE_SWEEP_MS: Type.Integer({ default: 3_600_000, minimum: 1000, description: 'how often the archival sweep runs (one replica per period)' }),
  MEMORY_RETRY_MAX_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    description: 'cap of the back-off between retries of a failed memory write or extraction',
  }),
};

type LongTermSettingsConfig = Static<ReturnType<typeof Type.Object<typeof longTermSettings>>>;

/** The tunables long-term memory runs with, from its settings. */
export function longTermTuning(c: LongTermSettingsConfig): LongTermTuning {
  return {
    extractMinConfidence: c.MEMORY_EXTRACT_MIN_CONFIDENCE,
    extractDebounceMs: c.MEMORY_EXTRACT_DEBOUNCE_MS,
    extractConcurrency: c.MEMORY_EXTRACT_CONCURRENCY,
    recall: { minScore: c.MEMORY_RECALL_MIN_SCORE, halfLifeDays: c.MEMORY_RECALL_HALF_LIFE_DAYS, recencyWeight: c.MEMORY_RECALL_RECENCY_WEIGHT },
    archiveAfterMs: c.MEMORY_ARCHIVE_AFTER_MS,
    archiveSweepMs: c.MEMORY_ARCHIVE_SWEEP_MS,
    retryMaxMs: c.MEMORY_RETRY_MAX_MS,
  };
}
